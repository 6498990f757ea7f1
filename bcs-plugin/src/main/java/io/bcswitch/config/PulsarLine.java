package io.bcswitch.config;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Optional;
import java.util.Properties;

/**
 * The Pulsar release line this jar was built for ({@code 4.2}: any 4.2.x broker), and the start-up check that the
 * broker loading it is on that line. The plugin reaches into broker internals that change between lines; on another
 * line it would fail later and obscurely (a NoSuchMethodError inside a running broker), so it refuses to start instead.
 *
 * @param line           major.minor, e.g. {@code 4.2}
 * @param builtAgainst   the exact Pulsar release it was compiled and tested against, e.g. {@code 4.2.4}
 */
public record PulsarLine(String line, String builtAgainst) {
    private static final String RESOURCE = "/io/bcswitch/bcs-build.properties";

    /** The line written into the jar by its build. */
    public static PulsarLine ofThisBuild() {
        Properties p = new Properties();
        try (InputStream in = PulsarLine.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the plugin jar");
            }
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new PulsarLine(p.getProperty("pulsar.line"), p.getProperty("pulsar.version"));
    }

    /**
     * Why a broker running {@code brokerVersion} must not load this jar, or empty when it may: its version is
     * {@code <line>.<patch>} (a suffix such as {@code -SNAPSHOT} allowed).
     */
    public Optional<String> refusal(String brokerVersion) {
        if (brokerVersion != null && (brokerVersion.startsWith(line + ".") || brokerVersion.startsWith(line + "-"))) {
            return Optional.empty();
        }
        return Optional.of("bookie-cluster-switch is built for the Pulsar " + line + " line (compiled and tested "
                + "against " + builtAgainst + "); this broker runs Pulsar " + (brokerVersion == null ? "(unknown)"
                : brokerVersion) + ". Install the bookie-cluster-switch distribution built for the broker's line "
                + "(see docs/compatibility.md).");
    }
}
