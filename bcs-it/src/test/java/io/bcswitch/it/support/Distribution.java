package io.bcswitch.it.support;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

/** The distribution archive built by {@code bcs-dist} ({@code bookie-cluster-switch-<version>.zip}). */
public final class Distribution {
    private Distribution() {
    }

    public static Path archive() throws IOException {
        Path target = io.bcswitch.testkit.Checkout.moduleTarget("bcs-dist");
        try (Stream<Path> files = Files.list(target)) {
            return files.filter(p -> p.getFileName().toString().matches("bookie-cluster-switch-.*\\.zip"))
                    .findFirst().orElseThrow(() -> new IllegalStateException("no distribution zip in " + target
                            + " (run mvn package from the project root)"));
        }
    }

    /** Unpacks the archive into {@code into}; returns its top directory. */
    public static Path unpack(Path into) throws IOException {
        Files.createDirectories(into);
        Path top = null;
        try (InputStream in = Files.newInputStream(archive()); ZipInputStream zip = new ZipInputStream(in)) {
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
