package io.bcswitch.it.support;

import io.bcswitch.config.PulsarLine;
import java.io.IOException;
import java.nio.file.Path;

/**
 * The distribution archive built by {@code bcs-dist} for the Pulsar line under test
 * ({@code bookie-cluster-switch-<version>-pulsar-<line>.zip}): the test kit's {@link io.bcswitch.testkit.Distribution}
 * for the line of this build.
 */
public final class Distribution {
    private Distribution() {
    }

    public static Path archive() throws IOException {
        return io.bcswitch.testkit.Distribution.archive(PulsarLine.ofThisBuild().line());
    }

    /** Unpacks the archive into {@code into}; returns its top directory. */
    public static Path unpack(Path into) throws IOException {
        return unpack(archive(), into);
    }

    /** Unpacks the distribution archive {@code archive} into {@code into}; returns its top directory. */
    public static Path unpack(Path archive, Path into) throws IOException {
        return io.bcswitch.testkit.Distribution.unpack(archive, into);
    }
}
