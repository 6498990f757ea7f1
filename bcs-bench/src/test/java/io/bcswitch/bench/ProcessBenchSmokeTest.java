package io.bcswitch.bench;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;

/**
 * The scenarios whose sides are processes of their own (ZooKeeper, every bookie and every broker a JVM), in their
 * smoke size, checked as {@link BenchSmokeTest} checks the others: a class of its own, so that they run beside those.
 */
@DisabledIfSystemProperty(named = "bcs.process", matches = "false",
        disabledReason = "-Dbcs.process=false leaves the process-cluster tests out")
class ProcessBenchSmokeTest {

    @Test
    void everyProcessScenarioRunsInItsSmokeSizeAndWritesItsResult() throws Exception {
        BenchSmokeTest.smoke(new Bench().names().stream().filter(Sides.Layout::onProcesses).toList(),
                Path.of("target", "bench-smoke-processes"));
    }
}
