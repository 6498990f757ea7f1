package io.bcswitch.it.support;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

/**
 * The distribution archive built by {@code bcs-dist} for the Pulsar line under test
 * ({@code bookie-cluster-switch-<version>-pulsar-<line>.zip}).
 */
public final class Distribution {
    private Distribution() {
    }

    public static Path archive() throws IOException {
        Path target = io.bcswitch.testkit.Checkout.moduleTarget("bcs-dist");
        try (Stream<Path> files = Files.list(target)) {
            String line = "-pulsar-" + io.bcswitch.config.PulsarLine.ofThisBuild().line() + ".zip";
            return files.filter(p -> p.getFileName().toString().startsWith("bookie-cluster-switch-")
                            && p.getFileName().toString().endsWith(line))
                    .findFirst().orElseThrow(() -> new IllegalStateException("no distribution zip *" + line + " in "
                            + target
                            + " (run mvn package from the project root)"));
        }
    }

    /** Unpacks the archive into {@code into}; returns its top directory. */
    public static Path unpack(Path into) throws IOException {
        return unpack(archive(), into);
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
