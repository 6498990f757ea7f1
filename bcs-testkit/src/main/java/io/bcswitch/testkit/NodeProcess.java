package io.bcswitch.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One JVM of a {@link ProcessCluster}: a ZooKeeper server, a bookie, a broker or a one-shot tool, started from an
 * installation's {@code lib/} with a product's own entry point, its output appended to a log file of its own.
 *
 * <p>Faults are the operating system's: {@link #kill()} is SIGKILL (no close hook runs, as with {@code kill -9} or
 * the OOM killer), {@link #pause()} and {@link #resume()} are SIGSTOP and SIGCONT (a GC pause of any length: the
 * process keeps its sockets and state and goes on where it stopped). {@link #restart()} starts the same command
 * again on the same ports and directories.
 */
public final class NodeProcess implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(NodeProcess.class);
    private static final Duration STOP_GRACE = Duration.ofSeconds(20);

    private final String name;
    private final List<String> command;
    private final Path workDir;
    private final Path logFile;
    private volatile Process process;
    private volatile boolean paused;

    private NodeProcess(String name, List<String> command, Path workDir, Path logFile) {
        this.name = name;
        this.command = List.copyOf(command);
        this.workDir = workDir;
        this.logFile = logFile;
    }

    /**
     * The command line of a JVM running {@code mainClass} with the jars of {@code libDir} on its class path.
     *
     * @param jvmOptions heap size, system properties, module opens (as the product's start script passes them)
     */
    static List<String> javaCommand(Path libDir, List<String> jvmOptions, String mainClass, List<String> args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        cmd.add(libDir + "/*");
        cmd.add(mainClass);
        cmd.addAll(args);
        return cmd;
    }

    /** Starts {@code command} in {@code workDir}; standard output and error are appended to {@code logFile}. */
    static NodeProcess start(String name, List<String> command, Path workDir, Path logFile) throws IOException {
        NodeProcess p = new NodeProcess(name, command, workDir, logFile);
        p.launch();
        return p;
    }

    /**
     * Waits for a one-shot tool (cluster metadata setup, a shell command) to end: a non-zero exit or a run past
     * {@code timeout} is an error naming its log.
     */
    void awaitSuccess(Duration timeout) throws InterruptedException {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException(name + " did not finish in " + timeout + " (log: " + logFile + ")");
            }
            int exit = process.exitValue();
            if (exit != 0) {
                throw new IllegalStateException(name + " exited with " + exit + " (log: " + logFile + ")");
            }
        } finally {
            close();
        }
    }

    private void launch() throws IOException {
        Files.createDirectories(logFile.getParent());
        Files.writeString(logFile, "### " + Instant.now() + " start: " + String.join(" ", command) + "\n",
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        process = new ProcessBuilder(command).directory(workDir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .start();
        paused = false;
        LOG.info("{} started (pid {}), log {}", name, process.pid(), logFile);
    }

    public String name() {
        return name;
    }

    /** The operating system's process id; -1 when not started. */
    public long pid() {
        Process p = process;
        return p == null ? -1 : p.pid();
    }

    public boolean isAlive() {
        Process p = process;
        return p != null && p.isAlive();
    }

    /** SIGKILL, then waits until the process is gone: nothing of it runs, no close hook, no last write. */
    public void kill() throws InterruptedException {
        Process p = process;
        if (p == null || !p.isAlive()) {
            return;
        }
        if (paused) {
            signal("CONT"); // a stopped process is killed all the same; this only keeps the bookkeeping plain
        }
        p.destroyForcibly();
        p.waitFor();
        paused = false;
        note("killed (SIGKILL)");
        LOG.info("{} killed (SIGKILL, pid {})", name, p.pid());
    }

    /** SIGSTOP: the process stops where it is, sockets open, until {@link #resume()}. */
    public void pause() {
        signal("STOP");
        paused = true;
        note("paused (SIGSTOP)");
        LOG.info("{} paused (SIGSTOP, pid {})", name, pid());
    }

    /** SIGCONT: a paused process goes on from where it stopped. */
    public void resume() {
        signal("CONT");
        paused = false;
        note("resumed (SIGCONT)");
        LOG.info("{} resumed (SIGCONT, pid {})", name, pid());
    }

    /**
     * SIGTERM and a wait for the process's own shutdown (the product's shutdown hooks run), SIGKILL past the grace
     * period. Idempotent.
     */
    public void stop() throws InterruptedException {
        Process p = process;
        if (p == null || !p.isAlive()) {
            return;
        }
        if (paused) {
            resume();
        }
        p.destroy();
        if (!p.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
            LOG.warn("{} did not stop in {} after SIGTERM: SIGKILL", name, STOP_GRACE);
            p.destroyForcibly();
            p.waitFor();
        }
        note("stopped (exit " + p.exitValue() + ")");
        LOG.info("{} stopped (pid {}, exit {})", name, p.pid(), p.exitValue());
    }

    /** The same command again (after {@link #kill()} or {@link #stop()}); a running process is stopped first. */
    public void restart() throws IOException, InterruptedException {
        stop();
        launch();
    }

    /** Waits until something accepts connections on {@code 127.0.0.1:port}, failing early if the process died. */
    void awaitPort(int port, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 500);
                return;
            } catch (IOException notYet) {
                if (!isAlive()) {
                    throw new IllegalStateException(name + " exited before it listened on port " + port + " (log: "
                            + logFile + ")");
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(name + " does not listen on port " + port + " after " + timeout
                            + " (log: " + logFile + ")");
                }
                Thread.sleep(200);
            }
        }
    }

    private void signal(String sig) {
        long pid = pid();
        if (pid < 0) {
            throw new IllegalStateException(name + " is not running");
        }
        try {
            Process k = new ProcessBuilder("kill", "-" + sig, Long.toString(pid)).inheritIO().start();
            if (!k.waitFor(10, TimeUnit.SECONDS) || k.exitValue() != 0) {
                throw new IllegalStateException("kill -" + sig + " " + pid + " (" + name + ") failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** A line in the node's own log, so that reading it shows when the test did what to it. */
    private void note(String what) {
        try {
            Files.writeString(logFile, "### " + Instant.now() + " " + what + "\n", StandardOpenOption.APPEND);
        } catch (IOException e) {
            LOG.debug("cannot note '{}' in {}", what, logFile, e);
        }
    }

    /** SIGKILL without waiting or logging (a shutdown hook's last resort). */
    void destroyNow() {
        Process p = process;
        if (p != null) {
            p.destroyForcibly();
        }
    }

    /** Kills the process if it still runs (a fixture closing after a failed test must leave no JVM behind). */
    @Override
    public void close() throws InterruptedException {
        kill();
    }

    @Override
    public String toString() {
        return name + "[pid " + pid() + (isAlive() ? paused ? ", paused" : "" : ", not running") + "]";
    }
}
