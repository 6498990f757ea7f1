package io.bcswitch.testkit;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A server a test runs from a binary on the PATH, the way a distribution's package installs it (Debian's
 * {@code prometheus}, {@code etcd}): its process, the temporary directory it keeps its data and log in, and the
 * fixture ports it listens on, all released by {@link #close()}, also when the start fails. A JVM that exits stops the
 * process through a shutdown hook; one killed with {@code kill -9} leaves it running.
 */
public final class LocalServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LocalServer.class);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final long START_SECONDS = 60;

    private final String name;
    private final Process process;
    private final Path dir;
    private final Ports ports;
    private final Thread killer;
    private boolean closed;

    private LocalServer(String name, Process process, Path dir, Ports ports) {
        this.name = name;
        this.process = process;
        this.dir = dir;
        this.ports = ports;
        this.killer = new Thread(process::destroyForcibly, name + "-killer");
        Runtime.getRuntime().addShutdownHook(killer);
    }

    /** The executable {@code name} on the PATH, if there is one. */
    public static Optional<Path> binary(String name) {
        String path = System.getenv().getOrDefault("PATH", "");
        return java.util.Arrays.stream(path.split(File.pathSeparator)).filter(d -> !d.isEmpty())
                .map(d -> Path.of(d, name)).filter(Files::isExecutable).findFirst();
    }

    /** What a server needs before it starts: its directory and ports, to build its command line from. */
    @FunctionalInterface
    public interface Command {
        List<String> build(Path dir, int[] ports) throws IOException;
    }

    /**
     * Starts {@code command} (given a fresh temporary directory and {@code portCount} fixture ports) with its output
     * in {@code <dir>/server.log}; returns once an HTTP GET of {@code readyUrl} (built from the same ports) answers
     * 200. On any failure the process, directory and ports are released and the log's tail is in the exception.
     */
    public static LocalServer start(String name, int portCount, Command command,
                                    java.util.function.Function<int[], String> readyUrl) throws Exception {
        Path dir = Files.createTempDirectory("bcs-" + name + "-");
        Ports ports = Ports.reserve();
        Process p = null;
        LocalServer server = null;
        try {
            int[] taken = ports.take(portCount);
            p = new ProcessBuilder(command.build(dir, taken)).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("server.log").toFile()).start();
            server = new LocalServer(name, p, dir, ports);
            URI ready = URI.create(readyUrl.apply(taken));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_SECONDS);
            while (!answers(ready)) {
                if (!p.isAlive() || System.nanoTime() > deadline) {
                    throw new IllegalStateException(name + " did not start (" + (p.isAlive() ? "no answer from "
                            + ready + " in " + START_SECONDS + " s" : "exited " + p.exitValue()) + "): "
                            + server.logTail());
                }
                Thread.sleep(200);
            }
            log.info("{} (pid {}) ready on ports {}; data and log in {}", name, p.pid(), java.util.Arrays.toString(taken),
                    dir);
            return server;
        } catch (Exception | Error e) {
            try {
                if (server != null) {
                    server.close();
                } else {
                    if (p != null) {
                        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                    }
                    ports.close();
                    deleteQuietly(dir);
                }
            } catch (Exception | Error cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    private static boolean answers(URI url) {
        try {
            return HTTP.send(HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The directory the server keeps its data and log in. */
    public Path dir() {
        return dir;
    }

    /** The server's last 30 log lines (for a failure's message). */
    public String logTail() {
        try {
            List<String> lines = Files.readAllLines(dir.resolve("server.log"));
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (Exception e) {
            return "(no log: " + e + ")";
        }
    }

    private static void deleteQuietly(Path dir) {
        try {
            TempDirs.deleteRecursively(dir);
        } catch (Exception e) {
            log.warn("Could not remove {}: {}", dir, e.toString());
        }
    }

    /** Stops the process (forcibly after 20 s), then frees its ports and removes its directory; once. */
    @Override
    public synchronized void close() throws Exception {
        if (closed) {
            return;
        }
        closed = true;
        try {
            process.destroy();
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(killer);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs anyway
            }
            ports.close();
            deleteQuietly(dir);
            log.info("{} stopped", name);
        }
    }
}
