package io.bcswitch.bench;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;

/**
 * The scenarios whose sides are processes of their own (ZooKeeper, every bookie and every broker a JVM), in their
 * smoke size, checked as {@link BenchSmokeTest} checks the others: a class of its own, so that they run beside those.
 * Their brokers get the test fixture's lean JVM settings: with Pulsar's (ZGC, the full JIT compiler, the heap touched
 * at start) the smoke run took twice as long on two cores, and its figures mean nothing anyway.
 */
@DisabledIfSystemProperty(named = "bcs.process", matches = "false",
        disabledReason = "-Dbcs.process=false leaves the process-cluster tests out")
class ProcessBenchSmokeTest {
    private static String given;

    @BeforeAll
    static void leanBrokers() {
        given = System.setProperty(Sides.BROKER_JVM_PROPERTY, "lean");
    }

    @AfterAll
    static void restore() {
        if (given == null) {
            System.clearProperty(Sides.BROKER_JVM_PROPERTY);
        } else {
            System.setProperty(Sides.BROKER_JVM_PROPERTY, given);
        }
    }

    @Test
    void everyProcessScenarioRunsInItsSmokeSizeAndWritesItsResult() throws Exception {
        BenchSmokeTest.smoke(new Bench().names().stream().filter(Sides.Layout::onProcesses).toList(),
                Path.of("target", "bench-smoke-processes"));
    }
}
