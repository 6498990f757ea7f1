package io.bcswitch.it.support;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the real {@code pulsar-admin} (Pulsar client tools, gathered by the {@code bcs-it-pulsar-admin}
 * module) as a separate process with the {@code bookie-clusters} extension, installed the way the
 * operator docs say: the NAR from the distribution archive's {@code cliextensions/} in a directory, and
 * the archive's {@code conf/client.conf.snippet} appended to client.conf with that directory filled in;
 * the JVM options are the ones {@code bin/pulsar-admin} passes.
 */
public final class PulsarAdminCli implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PulsarAdminCli.class);
    private static final String MAIN = "org.apache.pulsar.admin.cli.PulsarAdminTool";
    private static final int RUN_LIMIT_SECONDS = 240;

    /** Exit status and what the process printed. */
    public record Result(int exit, String stdout, String stderr) {
        public String all() {
            return stdout + stderr;
        }
    }

    private final Path dir;
    private final Path conf;
    private final Path libDir;
    /**
     * A class-data-sharing archive of the tool's classes, beside its libraries: each run starts a JVM that loads
     * the whole admin tool, and mapping those classes from an archive roughly halves that (the suites run the
     * tool about a hundred times). Made by the first run of any instance; no flag of it changes what the tool does.
     */
    private final Path classArchive;
    private boolean archiveTried;

    /**
     * @param webServiceUrl broker web service URL
     * @param authParams    {@code token:<jwt>} for token authentication, or null for none
     */
    public PulsarAdminCli(String webServiceUrl, String authParams) throws IOException {
        this(webServiceUrl, authParams == null ? Map.of()
                : Map.of("authPlugin", Tokens.TOKEN_AUTH_PLUGIN, "authParams", authParams));
    }

    /**
     * @param webServiceUrl broker web service URL
     * @param clientConf    further client.conf settings (authentication, TLS), as an operator writes them there
     */
    public PulsarAdminCli(String webServiceUrl, Map<String, String> clientConf) throws IOException {
        this.libDir = io.bcswitch.testkit.Checkout.moduleTarget("bcs-it-pulsar-admin").resolve("lib");
        if (!Files.isDirectory(libDir)) {
            throw new IllegalStateException("pulsar-admin runtime not built: " + libDir
                    + " (run mvn install or package from the project root)");
        }
        // named after the libraries it was made from: another Pulsar line's build puts others there
        String libs;
        try (Stream<Path> jars = Files.list(libDir)) {
            libs = jars.map(j -> j.getFileName().toString()).sorted().toList().toString();
        }
        this.classArchive = libDir.resolveSibling("pulsar-admin-" + Integer.toHexString(libs.hashCode()) + ".jsa");
        this.dir = Files.createTempDirectory("bcs-pulsar-admin-");
        Path dist = Distribution.unpack(dir.resolve("dist"));
        Path ext = Files.createDirectories(dir.resolve("cliextensions"));
        try (Stream<Path> nars = Files.list(dist.resolve("cliextensions"))) {
            for (Path nar : nars.filter(p -> p.toString().endsWith(".nar")).toList()) {
                Files.copy(nar, ext.resolve(nar.getFileName()));
            }
        }
        StringBuilder c = new StringBuilder();
        c.append("webServiceUrl=").append(webServiceUrl).append('\n');
        for (String line : Files.readAllLines(dist.resolve("conf/client.conf.snippet"))) {
            c.append(line.startsWith("cliExtensionsDirectory=") ? "cliExtensionsDirectory=" + ext : line).append('\n');
        }
        new java.util.TreeMap<>(clientConf).forEach((k, v) -> c.append(k).append('=').append(v).append('\n'));
        this.conf = dir.resolve("client.conf");
        Files.writeString(conf, c.toString());
    }

    /** {@code pulsar-admin <args>} with empty standard input. */
    public Result run(String... args) throws Exception {
        return runWithInput("", args);
    }

    /** {@code pulsar-admin <args>}, {@code input} on standard input. */
    public Result runWithInput(String input, String... args) throws Exception {
        Path dumped = null;
        List<String> cmd = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                // the JVM's own log lines (class sharing warnings among them) would mix with what the tool prints
                "-Xlog:disable"));
        if (Files.exists(classArchive)) {
            cmd.add("-XX:SharedArchiveFile=" + classArchive); // a stale or foreign archive is ignored, not fatal
        } else if (!archiveTried) {
            archiveTried = true;
            // beside the archive, so that it can be renamed into place in one step (other JVMs may read it)
            dumped = classArchive.resolveSibling(java.util.UUID.randomUUID() + ".jsa.part");
            cmd.add("-XX:ArchiveClassesAtExit=" + dumped);
        }
        cmd.addAll(List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-Djava.io.tmpdir=" + dir,
                // what bin/pulsar-admin passes: javassist (custom commands) defines classes reflectively
                "--add-opens", "java.base/java.lang=ALL-UNNAMED",
                "-cp", libDir + "/*", MAIN, conf.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile())
                .redirectOutput(dir.resolve("out.txt").toFile())
                .redirectError(dir.resolve("err.txt").toFile())
                .start();
        p.getOutputStream().write(input.getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().close();
        // a bound for a tool that hangs, not a speed limit: a first run also writes the class archive at its exit,
        // which on a loaded 2-core machine beside a cluster of separate processes took more than 90 s
        if (!p.waitFor(RUN_LIMIT_SECONDS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("pulsar-admin " + String.join(" ", args) + " did not finish in "
                    + RUN_LIMIT_SECONDS + " s");
        }
        String out = Files.readString(dir.resolve("out.txt"));
        // drop the tool's own logging-backend notice; keep everything else it printed
        String err = Files.readString(dir.resolve("err.txt")).lines().filter(l -> !l.startsWith("SLF4J"))
                .reduce("", (a, b) -> a + b + "\n");
        Result r = new Result(p.exitValue(), out, err);
        if (dumped != null && Files.exists(dumped)) {
            try {
                Files.move(dumped, classArchive, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                Files.deleteIfExists(dumped);
                log.info("class archive not kept ({}): later runs start without it", e.toString());
            }
        }
        log.info("$ pulsar-admin {}\n{}{}[exit {}]", String.join(" ", args), out, err, r.exit());
        return r;
    }

    @Override
    public void close() throws IOException {
        io.bcswitch.testkit.TempDirs.deleteRecursively(dir);
    }
}
