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
 *
 * <p>A {@link #supervised} node is started again when it exits by itself, as systemd or Kubernetes restart a
 * bookie in production: BookKeeper expects that (a bookie that cannot register again after its metadata session
 * expired, because its old registration outlives its wait, exits with code 4 for its supervisor to restart). An
 * exit the test caused ({@link #kill}, {@link #stop}, {@link #close}) is never undone by the supervisor.
 */
public final class NodeProcess implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(NodeProcess.class);
    private static final Duration STOP_GRACE = Duration.ofSeconds(20);

    private final String name;
    private final List<String> command;
    private final Path workDir;
    private final Path logFile;
    /** Told of every start, so that the process dies with the test JVM however that ends; null: nobody. */
    private final NodeReaper reaper;
    private volatile Process process;
    private volatile boolean paused;
    private volatile boolean supervised;
    /** Set before the test ends the process, so that the supervisor leaves that exit alone. */
    private volatile boolean exitExpected;
    private volatile boolean closed;
    private final java.util.concurrent.atomic.AtomicInteger restartsBySupervisor =
            new java.util.concurrent.atomic.AtomicInteger();

    private NodeProcess(String name, List<String> command, Path workDir, Path logFile, NodeReaper reaper) {
        this.name = name;
        this.command = List.copyOf(command);
        this.workDir = workDir;
        this.logFile = logFile;
        this.reaper = reaper;
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

    /**
     * Starts {@code command} in {@code workDir}; standard output and error are appended to {@code logFile}; every
     * start (also by the supervisor or {@link #restart()}) is told to {@code reaper}.
     */
    static NodeProcess start(String name, List<String> command, Path workDir, Path logFile, NodeReaper reaper)
            throws IOException {
        NodeProcess p = new NodeProcess(name, command, workDir, logFile, reaper);
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

    /**
     * From now on, an exit the test did not cause is followed by a start of the same command a second later (each
     * logged as a warning and noted in the node's log; see {@link #restartsBySupervisor()}).
     */
    NodeProcess supervised() {
        supervised = true;
        Process p = process;
        if (p != null) {
            p.onExit().thenRun(() -> exited(p));
        }
        return this;
    }

    /** How often the supervisor started this node again after it exited by itself. */
    public int restartsBySupervisor() {
        return restartsBySupervisor.get();
    }

    private void exited(Process p) {
        if (!supervised || exitExpected || closed || p != process) {
            return;
        }
        LOG.warn("{} exited by itself (pid {}, exit {}): starting it again in 1 s, as its supervisor would", name,
                p.pid(), p.exitValue());
        note("exited by itself (exit " + p.exitValue() + "): started again by the supervisor");
        java.util.concurrent.CompletableFuture.delayedExecutor(1, TimeUnit.SECONDS).execute(() -> relaunch(p));
    }

    private synchronized void relaunch(Process exited) {
        if (exitExpected || closed || exited != process) {
            return; // the test stopped, restarted or closed it meanwhile
        }
        try {
            launch();
            restartsBySupervisor.incrementAndGet();
        } catch (IOException e) {
            LOG.error("{}: the supervisor could not start it again", name, e);
        }
    }

    private synchronized void launch() throws IOException {
        Files.createDirectories(logFile.getParent());
        Files.writeString(logFile, "### " + Instant.now() + " start: " + String.join(" ", command) + "\n",
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        process = new ProcessBuilder(command).directory(workDir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .start();
        if (reaper != null) {
            reaper.track(name, process);
        }
        paused = false;
        exitExpected = false;
        if (supervised) {
            Process p = process;
            p.onExit().thenRun(() -> exited(p));
        }
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
    public synchronized void kill() throws InterruptedException {
        exitExpected = true;
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
    public synchronized void stop() throws InterruptedException {
        exitExpected = true;
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
        closed = true;
        Process p = process;
        if (p != null) {
            p.destroyForcibly();
        }
    }

    /** Kills the process if it still runs (a fixture closing after a failed test must leave no JVM behind). */
    @Override
    public void close() throws InterruptedException {
        closed = true;
        kill();
    }

    @Override
    public String toString() {
        return name + "[pid " + pid() + (isAlive() ? paused ? ", paused" : "" : ", not running") + "]";
    }
}
