package io.bcswitch.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.bcswitch.it.support.ProcessClusterTestBase;
import io.bcswitch.testkit.NodeProcess;
import io.bcswitch.testkit.NodeReaper;
import io.bcswitch.testkit.Ports;
import io.bcswitch.testkit.ProcessCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every process a {@link ProcessCluster} starts is stopped by the fixture however the test ends: a test that fails
 * or times out (its class's {@code @AfterAll} closes the cluster), a test JVM that exits without closing it (the
 * shutdown hook), and a test JVM killed with SIGKILL, as surefire's fork timeout halts it (the node reaper). After
 * each, no node's process runs (a paused one included), every port the cluster reserved can be bound again and its
 * temp directory is gone.
 */
@DisabledIfSystemProperty(named = "bcs.process", matches = "false",
        disabledReason = "-Dbcs.process=false leaves the process-cluster tests out (ProcessClusterTestBase)")
class ProcessClusterCleanupTest {
    private static final Logger log = LoggerFactory.getLogger(ProcessClusterCleanupTest.class);
    private static final String STARTED = "CLUSTER-STARTED ";
    private static final Duration GONE_WITHIN = Duration.ofSeconds(60);

    @Test
    void aFailedTestAndATimedOutOneLeaveNoProcessNoBoundPortAndNoTempDirectory() throws Exception {
        SummaryGeneratingListener summary = new SummaryGeneratingListener();
        FailingTests.run = true;
        try {
            LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
                    .selectors(selectClass(FailingTests.class)).build(), summary);
        } finally {
            FailingTests.run = false;
        }
        TestExecutionSummary s = summary.getSummary();
        Started started = FailingTests.started;
        try {
            assertNotNull(started, "the failing class never started its cluster: " + s.getFailures());
            assertEquals(2, s.getTestsStartedCount(), "both tests ran");
            assertEquals(2, s.getTestsFailedCount(), "both tests failed");
            assertTrue(s.getFailures().stream().anyMatch(f -> f.getException() instanceof TimeoutException),
                    "one of them by its timeout: " + s.getFailures());
            assertEquals(0, s.getContainersFailedCount(), "the class's own start and close went through");
            assertNothingLeft(started);
        } finally {
            killLeftovers(started);
        }
    }

    @ParameterizedTest
    @EnumSource(Ending.class)
    void aTestJvmThatEndsWithoutClosingItsClusterLeavesNoProcessNoBoundPortAndNoTempDirectory(Ending ending)
            throws Exception {
        Path out = Files.createDirectories(Path.of("target", "process-cluster"))
                .resolve("unclosed-" + ending.name().toLowerCase() + "-" + System.nanoTime() + ".log");
        Process jvm = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                UnclosedClusterJvm.class.getName(), ending.name())
                .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        Started started = null;
        try {
            started = awaitStarted(jvm, out);
            log.info("Test JVM pid {} started {}; it now {}", jvm.pid(), started, ending);
            if (ending == Ending.KILLED) {
                jvm.destroyForcibly(); // SIGKILL: no @AfterAll, no shutdown hook, as a fork timeout's halt
            }
            assertTrue(jvm.waitFor(60, TimeUnit.SECONDS), "the test JVM ended");
            assertEquals(ending == Ending.KILLED ? 137 : 3, jvm.exitValue(), "how the test JVM ended (" + out + ")");
            assertNothingLeft(started);
            if (ending == Ending.KILLED) {
                String reaper = Files.readString(started.logDir().resolve("node-reaper.log"));
                assertTrue(reaper.contains("killed broker-0"), "the reaper killed the paused broker: " + reaper);
            }
        } finally {
            jvm.destroyForcibly();
            killLeftovers(started);
        }
    }

    /** How a test JVM ends without closing its cluster. */
    enum Ending {
        /** {@code System.exit}: no {@code @AfterAll}, but the JVM's shutdown hooks run. */
        EXITED,
        /** SIGKILL (also what surefire's fork timeout comes to): nothing of the JVM runs any more. */
        KILLED
    }

    /**
     * What a cluster started: every node's process id and start time (epoch ms; a pid alone could be another process's
     * by the time it is looked at), the ports it reserved, its temp and its log directory.
     */
    record Started(List<Long> pids, List<Long> starts, List<Integer> ports, Path workDir, Path logDir) {
        static Started of(ProcessCluster c) {
            List<NodeProcess> nodes = new ArrayList<>();
            nodes.add(c.zooKeeper());
            c.bookieClusterNames().forEach(name -> nodes.addAll(c.bookies(name)));
            for (int i = 0; i < c.brokerCount(); i++) {
                nodes.add(c.broker(i).process());
            }
            List<Long> pids = nodes.stream().map(NodeProcess::pid).toList();
            List<Long> starts = pids.stream().map(pid -> ProcessHandle.of(pid).flatMap(h -> h.info().startInstant())
                    .orElseThrow(() -> new AssertionError("no start time of pid " + pid)).toEpochMilli()).toList();
            return new Started(pids, starts, c.reservedPorts(), c.workDir().toAbsolutePath(),
                    c.logDir().toAbsolutePath());
        }

        String line() {
            return STARTED + join(pids) + " " + join(starts) + " " + join(ports) + " " + workDir + " " + logDir;
        }

        static Started parse(String line) {
            String[] f = line.substring(STARTED.length()).trim().split(" ");
            return new Started(Arrays.stream(f[0].split(",")).map(Long::parseLong).toList(),
                    Arrays.stream(f[1].split(",")).map(Long::parseLong).toList(),
                    Arrays.stream(f[2].split(",")).map(Integer::parseInt).toList(), Path.of(f[3]), Path.of(f[4]));
        }

        private static String join(List<? extends Number> values) {
            return values.stream().map(String::valueOf).collect(Collectors.joining(","));
        }

        /** The nodes still running: the same process (pid and start time), and not a zombie nobody reaped. */
        List<ProcessHandle> running() {
            List<ProcessHandle> out = new ArrayList<>();
            for (int i = 0; i < pids.size(); i++) {
                long start = starts.get(i);
                ProcessHandle.of(pids.get(i)).filter(ProcessHandle::isAlive)
                        .filter(h -> NodeReaper.Main.sameStart(h, start)).filter(h -> !zombie(h.pid()))
                        .ifPresent(out::add);
            }
            return out;
        }

        private static boolean zombie(long pid) {
            try {
                String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
                return stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
            } catch (IOException | RuntimeException gone) {
                return false;
            }
        }
    }

    private static Started awaitStarted(Process jvm, Path out) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(4);
        while (System.nanoTime() < deadline) {
            for (String line : Files.readAllLines(out)) {
                if (line.startsWith(STARTED)) {
                    return Started.parse(line);
                }
            }
            if (!jvm.isAlive()) {
                fail("the test JVM ended before its cluster started (exit " + jvm.exitValue() + ", " + out + ")");
            }
            Thread.sleep(250);
        }
        return fail("the test JVM's cluster did not start in 4 minutes (" + out + ")");
    }

    private static void assertNothingLeft(Started started) throws InterruptedException {
        long deadline = System.nanoTime() + GONE_WITHIN.toNanos();
        List<ProcessHandle> alive = started.running();
        while (!alive.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(200);
            alive = started.running();
        }
        assertEquals(List.of(), alive.stream().map(ProcessHandle::pid).toList(),
                "node processes still running " + GONE_WITHIN + " after the test ended");
        assertEquals(started.pids().size(), started.pids().stream().distinct().count(), "a pid per node");
        List<Integer> bound = started.ports().stream().filter(p -> !Ports.bindable(p)).toList();
        assertEquals(List.of(), bound, "ports of the cluster still bound");
        while (Files.exists(started.workDir()) && System.nanoTime() < deadline) {
            Thread.sleep(200); // the reaper deletes it after the kills
        }
        assertFalse(Files.exists(started.workDir()), "the cluster's temp directory " + started.workDir());
    }

    /** Whatever a failed assertion left running is killed, so that a red run of this test leaks nothing either. */
    private static void killLeftovers(Started started) {
        if (started != null) {
            started.running().forEach(ProcessHandle::destroyForcibly);
        }
    }

    /**
     * A test class of a process cluster whose tests fail, one by an assertion, one by its timeout, with the broker
     * paused (SIGSTOP) at that moment; only {@link #aFailedTestAndATimedOutOneLeaveNoProcessNoBoundPortAndNoTempDirectory}
     * runs it.
     */
    @EnabledIf("runByTheCleanupTest")
    static class FailingTests extends ProcessClusterTestBase {
        static volatile boolean run;
        static volatile Started started;

        static boolean runByTheCleanupTest() {
            return run;
        }

        @BeforeAll
        static void start() throws Exception {
            started = null;
            cluster = ProcessCluster.builder().bookieCluster("cluster-a", 1).brokers(1).start();
            started = Started.of(cluster);
        }

        @Test
        void failsWithTheBrokerPaused() {
            cluster.broker(0).pause();
            fail("a test that fails");
        }

        @Test
        @Timeout(2)
        void timesOut() throws InterruptedException {
            Thread.sleep(Long.MAX_VALUE);
        }
    }

    /**
     * A test JVM that starts a process cluster (one bookie, one broker), pauses the broker (SIGSTOP), prints what it
     * started and then ends without closing the cluster: {@code EXITED} exits with 3, {@code KILLED} waits for the
     * test's SIGKILL.
     */
    static final class UnclosedClusterJvm {
        public static void main(String[] args) throws Exception {
            Ending ending = Ending.valueOf(args[0]);
            ProcessCluster cluster = ProcessCluster.builder().bookieCluster("cluster-a", 1).brokers(1).start();
            cluster.broker(0).pause();
            System.out.println(Started.of(cluster).line());
            System.out.flush();
            if (ending == Ending.EXITED) {
                System.exit(3);
            }
            Thread.sleep(Long.MAX_VALUE);
        }
    }
}
