package io.bcswitch.it.support;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The distribution archive of an earlier commit of this repository, built from the checkout's own history (a clone
 * holds it): the sources of that commit exported with {@code git archive}, then {@code mvn package} of the archive
 * module and what it needs, without tests. Built once per checkout and kept under {@code bcs-it/target/earlier-dist/}.
 * Without git, or in a clone without that commit (a shallow one), the test that asks is skipped and says why.
 */
public final class EarlierDistribution {
    private static final Logger LOG = LoggerFactory.getLogger(EarlierDistribution.class);
    private static final long BUILD_MINUTES = 15;

    private EarlierDistribution() {
    }

    /** Unpacks the archive commit {@code commit} builds into {@code into}; returns its top directory. */
    public static Path unpack(String commit, Path into) throws IOException, InterruptedException {
        return Distribution.unpack(archive(commit), into);
    }

    /** The archive commit {@code commit} builds (for the Pulsar line under test), built on first use. */
    public static synchronized Path archive(String commit) throws IOException, InterruptedException {
        Path target = io.bcswitch.testkit.Checkout.moduleTarget("bcs-it");
        Path root = target.getParent().getParent();
        Path cache = target.resolve("earlier-dist").resolve(commit);
        String line = io.bcswitch.config.PulsarLine.ofThisBuild().line();
        Path zip = cache.resolve("bookie-cluster-switch-pulsar-" + line + ".zip");
        if (Files.exists(zip)) {
            return zip;
        }
        int known;
        try {
            known = run(root, cache.resolveSibling(commit + "-git.log"), "git", "cat-file", "-e", commit + "^{commit}");
        } catch (IOException noGit) {
            known = -1; // no git on this machine
        }
        Assumptions.assumeTrue(known == 0, "commit " + commit + " is not in this clone's history (a shallow clone, "
                + "or no git): the upgrade from it cannot be built");
        Path src = cache.resolve("src");
        Files.createDirectories(src);
        Path log = cache.resolve("build.log");
        long t0 = System.nanoTime();
        int exported = run(root, log, "bash", "-c", "git archive --format=tar " + commit + " | tar -x -C '" + src
                + "'");
        check(exported, "git archive of " + commit, log);
        List<String> mvn = new java.util.ArrayList<>(List.of("mvn", "-B", "-q", "-pl", "bcs-dist", "-am", "package",
                "-Dmaven.test.skip=true"));
        if (!"4.2".equals(line)) {
            mvn.add("-Ppulsar-" + line);
        }
        check(run(src, log, mvn.toArray(String[]::new)), "mvn package of " + commit, log);
        try (Stream<Path> files = Files.list(src.resolve("bcs-dist").resolve("target"))) {
            Path built = files.filter(p -> p.getFileName().toString().startsWith("bookie-cluster-switch-")
                    && p.getFileName().toString().endsWith("-pulsar-" + line + ".zip")).findFirst()
                    .orElseThrow(() -> new IllegalStateException("no distribution zip built by " + commit + " in "
                            + src.resolve("bcs-dist/target")));
            Files.copy(built, zip);
        }
        io.bcswitch.testkit.TempDirs.deleteRecursively(src);
        LOG.info("Distribution archive of commit {} built in {} s: {}", commit,
                TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0), zip);
        return zip;
    }

    private static int run(Path dir, Path log, String... command) throws IOException, InterruptedException {
        Files.createDirectories(log.getParent());
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        if (!p.waitFor(BUILD_MINUTES, TimeUnit.MINUTES)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            throw new IllegalStateException(String.join(" ", command) + " took more than " + BUILD_MINUTES
                    + " minutes; its output is in " + log);
        }
        return p.exitValue();
    }

    private static void check(int exit, String what, Path log) throws IOException {
        if (exit != 0) {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            throw new IllegalStateException(what + " failed (exit " + exit + "); the end of " + log + ":\n"
                    + String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size())));
        }
    }
}
