package io.bcswitch.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

/**
 * The plugin's distribution archive as {@code bcs-dist} builds it ({@code bookie-cluster-switch-<version>-pulsar-
 * <line>.zip} in its {@code target}), and its unpacking: what an operator downloads and installs, and what the process
 * cluster installs on its brokers.
 */
public final class Distribution {
    private Distribution() {
    }

    /**
     * The archive for Pulsar line {@code line} ("4.2") in this checkout's {@code bcs-dist/target} (after a build for
     * another line, that target may hold one for each).
     */
    public static Path archive(String line) throws IOException {
        Path target = Checkout.moduleTarget("bcs-dist");
        String suffix = "-pulsar-" + line + ".zip";
        if (!Files.isDirectory(target)) {
            throw new IllegalStateException("no " + target + ": build the project first (mvn package from its root)");
        }
        try (Stream<Path> files = Files.list(target)) {
            return files.filter(p -> p.getFileName().toString().startsWith("bookie-cluster-switch-")
                            && p.getFileName().toString().endsWith(suffix))
                    .findFirst().orElseThrow(() -> new IllegalStateException("no distribution zip *" + suffix
                            + " in " + target + " (run mvn package from the project root)"));
        }
    }

    /** Unpacks the distribution archive {@code archive} into {@code into}; returns its top directory. */
    public static Path unpack(Path archive, Path into) throws IOException {
        Files.createDirectories(into);
        Path top = null;
        try (InputStream in = Files.newInputStream(archive); ZipInputStream zip = new ZipInputStream(in)) {
            for (ZipEntry e; (e = zip.getNextEntry()) != null; ) {
                Path out = into.resolve(e.getName()).normalize();
                if (!out.startsWith(into)) {
                    throw new IOException("entry outside the archive root: " + e.getName());
                }
                if (e.isDirectory()) {
                    Files.createDirectories(out);
                } else {
                    Files.createDirectories(out.getParent());
                    Files.copy(zip, out);
                }
                if (top == null) {
                    top = into.resolve(e.getName().split("/")[0]);
                }
            }
        }
        return top;
    }
}
