#!/usr/bin/env bash
# Builds the project and runs the standalone launcher (io.bcswitch.launcher.Launcher): ZooKeeper,
# bookie clusters cluster-a and cluster-b and one broker with the bookie-cluster-switch plugin, all
# in one JVM, or with --processes each a JVM of its own (the broker started from a Pulsar
# installation with the plugin installed from the distribution archive this build makes; logs under
# bcs-launcher/target/process-cluster/). All arguments are passed to the launcher, e.g.
#   ./run-demo.sh                      # live switch demo under load, then exit (0 = nothing lost)
#   ./run-demo.sh --processes          # the same on separate processes (ps shows them)
#   ./run-demo.sh --phase-seconds 3 --topics 8 --rate 100
#   ./run-demo.sh --serve              # stay up on 6650/8080 for pulsar-admin, pulsar-client, curl
#   ./run-demo.sh --help
# Extra JVM options can be given in JAVA_OPTS.
set -euo pipefail
cd "$(dirname "$0")"

# mvn -q still prints ANSI resets (on stdout and stderr) even in batch mode; strip them.
# pipefail keeps mvn's exit status.
mvn_quiet() {
  mvn -B -q -Dstyle.color=never "$@" 2>&1 | sed -e $'s/\x1b\\[[0-9;]*m//g'
}

# The whole reactor: the broker loads the servlet NAR from bcs-servlet/target.
mvn_quiet -DskipTests install

classpath_file="$PWD/bcs-launcher/target/classpath.txt"
mvn_quiet -pl bcs-launcher \
  org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath \
  -Dmdep.outputFile="$classpath_file" -Dmdep.includeScope=runtime
classpath="$PWD/bcs-launcher/target/classes:$(cat "$classpath_file")"

# bookkeeper-server's jar carries its own log4j2.xml: name the launcher's explicitly.
# The --add-opens are the ones Pulsar's own bin/pulsar passes (load-manager and GC metrics).
# JAVA_OPTS is split on purpose.
# shellcheck disable=SC2086
exec java -Xmx2g -Dio.netty.allocator.type=unpooled -Dpulsar.allocator.pooled=false \
  --add-opens java.base/jdk.internal.platform=ALL-UNNAMED \
  --add-opens java.management/sun.management=ALL-UNNAMED \
  -Dlog4j2.configurationFile="$PWD/bcs-launcher/target/classes/log4j2.xml" \
  -Dbcs.servletNarDir="$PWD/bcs-servlet/target" \
  ${JAVA_OPTS:-} \
  -cp "$classpath" \
  io.bcswitch.launcher.Launcher "$@"
