#!/usr/bin/env bash
# Builds the project and runs a benchmark scenario (io.bcswitch.bench.Bench): each starts its own
# clusters (ZooKeeper, bookies, brokers; stock storage on one side, the plugin's on the other), in this
# JVM or, for steady-processes and cutover-processes, each node a JVM of its own (logs under
# bcs-bench/target/process-cluster/), alternates the two sides for a few rounds and writes
# <scenario>.json and <scenario>.txt.
#   ./run-bench.sh steady                 # steady-state overhead, 3 rounds per side
#   ./run-bench.sh all --rounds 5 --out /tmp/bench
#   ./run-bench.sh all --smoke            # seconds per scenario: checks the bench works, figures mean nothing
#   ./run-bench.sh --help
# Run it on an otherwise idle machine, from a checkout nothing else builds in. Extra JVM options can
# be given in JAVA_OPTS.
set -euo pipefail
cd "$(dirname "$0")"

mvn_quiet() {
  mvn -B -q -Dstyle.color=never "$@" 2>&1 | sed -e $'s/\x1b\\[[0-9;]*m//g'
}

# The whole reactor: brokers with the plugin load the servlet NAR from bcs-servlet/target; the process
# layout needs the distribution archive, the Pulsar server's jars and the rollover NAR built.
mvn_quiet -DskipTests install

classpath_file="$PWD/bcs-bench/target/classpath.txt"
mvn_quiet -pl bcs-bench \
  org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath \
  -Dmdep.outputFile="$classpath_file" -Dmdep.includeScope=runtime
classpath="$PWD/bcs-bench/target/classes:$(cat "$classpath_file")"

# shellcheck disable=SC2086
# jute.maxbuffer: the inventory scenario's 100,000 topics are in one namespace, whose listing is one ZooKeeper
# reply larger than ZooKeeper's 1 MB default (Pulsar's own topic listing needs the same there)
exec java -Xmx4g -Dio.netty.allocator.type=unpooled -Dpulsar.allocator.pooled=false -Djute.maxbuffer=10485760 \
  --add-opens java.base/jdk.internal.platform=ALL-UNNAMED \
  --add-opens java.management/sun.management=ALL-UNNAMED \
  -Dlog4j2.configurationFile="$PWD/bcs-bench/target/classes/log4j2.xml" \
  -Dbcs.servletNarDir="$PWD/bcs-servlet/target" \
  ${JAVA_OPTS:-} \
  -cp "$classpath" \
  io.bcswitch.bench.Bench "$@"
