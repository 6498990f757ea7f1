package io.bcswitch.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kills a {@link ProcessCluster}'s processes when the JVM that started them dies without closing it.
 *
 * <p>A test JVM does not always get to close its fixture: surefire halts a fork that runs past its timeout, and a
 * JVM dies by {@code kill -9} or the OOM killer; no {@code @AfterAll} and no shutdown hook runs then, and the
 * ZooKeeper, bookie and broker JVMs would run on, holding their ports, as orphans. So each cluster starts this small
 * JVM beside its nodes (only the JDK's classes, a few MB of heap) and tells it on its standard input, one line per
 * start, the process id and start time of every node it starts. The kernel closes that pipe when the test JVM ends,
 * however it ends; reading its end, the reaper kills every node it was told of that still runs (SIGKILL, which also
 * ends a node the test had paused with SIGSTOP), deletes the cluster's temp directory and exits. A cluster that
 * closes normally kills its nodes itself and then closes the pipe, and the reaper finds nothing left to do.
 *
 * <p>A process id is only killed if that process started when the cluster said it did, so a number the kernel gave
 * to another process meanwhile is left alone.
 */
public final class NodeReaper implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(NodeReaper.class);
    private static final long EXIT_WAIT_SECONDS = 30;
    private static final long START_SLACK_MILLIS = 2_000;

    private final Process process;
    private final Writer toReaper;
    private boolean broken;

    private NodeReaper(Process process) {
        this.process = process;
        this.toReaper = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    }

    /**
     * Starts the reaper of a cluster whose temp directory is {@code workDir}; it writes what it does to
     * {@code logFile}.
     */
    static NodeReaper start(Path workDir, Path logFile) throws IOException {
        Path classes;
        try {
            classes = Path.of(NodeReaper.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (java.net.URISyntaxException e) {
            throw new IOException("Cannot tell where the test kit's classes are", e);
        }
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx16m", "-Xss256k", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:CICompilerCount=1",
                "-cp", classes.toString(), Main.class.getName(), workDir.toString());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile())).start();
        LOG.info("Node reaper started (pid {}): it kills this cluster's processes if this JVM ends without closing it;"
                + " log {}", p.pid(), logFile);
        return new NodeReaper(p);
    }

    /** Tells the reaper of a node process just started; a reaper that is gone is logged once and ignored. */
    synchronized void track(String name, Process node) {
        Optional<Instant> started = node.toHandle().info().startInstant();
        if (started.isEmpty()) {
            LOG.warn("{} (pid {}): the operating system gives no start time, so the node reaper cannot tell it from a "
                    + "later process with its pid and leaves it alone; it would outlive a JVM that dies unclosed", name,
                    node.pid());
            return;
        }
        if (broken) {
            return;
        }
        try {
            toReaper.write(node.pid() + " " + started.get().toEpochMilli() + " " + name + "\n");
            toReaper.flush();
        } catch (IOException e) {
            broken = true;
            LOG.warn("The node reaper (pid {}) is gone: {} (pid {}) would outlive a JVM that dies unclosed", process.pid(),
                    name, node.pid(), e);
        }
    }

    /** Closes the pipe (the reaper kills what is left, normally nothing) and waits for the reaper to exit. */
    @Override
    public synchronized void close() throws InterruptedException {
        try {
            toReaper.close();
        } catch (IOException e) {
            LOG.debug("closing the node reaper's input", e);
        }
        if (!process.waitFor(EXIT_WAIT_SECONDS, TimeUnit.SECONDS)) {
            LOG.warn("The node reaper (pid {}) did not exit in {} s: killed", process.pid(), EXIT_WAIT_SECONDS);
            process.destroyForcibly();
        }
    }

    /**
     * The reaper's JVM: {@code NodeReaper$Main <temp directory>}; reads {@code <pid> <start epoch ms> <name>} lines
     * until the end of its input, then kills what still runs of them and deletes the temp directory. It uses only the
     * JDK and {@link TempDirs} (no logging library is on its class path).
     */
    public static final class Main {
        private Main() {
        }

        public static void main(String[] args) throws IOException, InterruptedException {
            Path workDir = Path.of(args[0]);
            Map<Long, String> nodes = new LinkedHashMap<>();
            Map<Long, Long> startMillis = new LinkedHashMap<>();
            say("watching the nodes of " + workDir + " for parent pid "
                    + ProcessHandle.current().parent().map(ProcessHandle::pid).orElse(-1L));
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    // only the end of the input means the cluster's JVM is gone: a line it cannot read is skipped
                    try {
                        String[] f = line.split(" ", 3);
                        long pid = Long.parseLong(f[0]);
                        startMillis.put(pid, Long.parseLong(f[1]));
                        nodes.put(pid, f.length > 2 ? f[2] : "?");
                    } catch (RuntimeException bad) {
                        say("skipped a line it cannot read: '" + line + "' (" + bad + ")");
                    }
                }
            } catch (IOException e) {
                say("reading the node list failed (" + e + "): killing what it named so far");
            }
            List<ProcessHandle> killed = new ArrayList<>();
            for (Map.Entry<Long, String> node : nodes.entrySet()) {
                long pid = node.getKey();
                Optional<ProcessHandle> h = ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                        .filter(p -> sameStart(p, startMillis.get(pid)));
                if (h.isPresent() && h.get().destroyForcibly()) {
                    killed.add(h.get());
                    say("killed " + node.getValue() + " (pid " + pid + "): its cluster was not closed");
                }
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(EXIT_WAIT_SECONDS);
            for (ProcessHandle h : killed) {
                while (h.isAlive() && System.nanoTime() < deadline) {
                    Thread.sleep(100);
                }
                if (h.isAlive()) {
                    say("pid " + h.pid() + " still runs " + EXIT_WAIT_SECONDS + " s after SIGKILL");
                }
            }
            try {
                // nothing is left after a closed cluster; after an unclosed one, its data, conf and installations
                if (java.nio.file.Files.exists(workDir)) {
                    TempDirs.deleteRecursively(workDir);
                    say("deleted " + workDir);
                }
            } catch (IOException | UncheckedIOException e) {
                say("cannot delete " + workDir + ": " + e);
            }
            say("done: " + nodes.size() + " nodes named, " + killed.size() + " killed");
        }

        /**
         * Whether {@code p} started when its cluster said the node did. Each JVM derives start times from the boot time
         * it read once, in whole seconds, so two JVMs can disagree by a little after the wall clock was stepped: a
         * few seconds of slack, far less than it takes the kernel to hand the same pid to another process.
         */
        public static boolean sameStart(ProcessHandle p, long startMillis) {
            return p.info().startInstant().map(s -> Math.abs(s.toEpochMilli() - startMillis) <= START_SLACK_MILLIS)
                    .orElse(false);
        }

        private static void say(String what) {
            System.out.println(Instant.now() + " node-reaper: " + what);
        }
    }
}
