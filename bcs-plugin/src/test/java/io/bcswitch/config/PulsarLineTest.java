package io.bcswitch.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class PulsarLineTest {
    private final PulsarLine line42 = new PulsarLine("4.2", "4.2.4");

    @Test
    void theBuildWroteItsLineIntoTheJar() {
        PulsarLine built = PulsarLine.ofThisBuild();
        assertTrue(built.line().matches("\\d+\\.\\d+"), built.toString());
        assertTrue(built.builtAgainst().startsWith(built.line() + "."), built.toString());
    }

    @Test
    void aBrokerOnTheLineMayLoadIt() {
        for (String v : new String[] {"4.2.4", "4.2.0", "4.2.5", "4.2.12", "4.2.5-SNAPSHOT"}) {
            assertEquals(Optional.empty(), line42.refusal(v), v);
        }
    }

    @Test
    void aBrokerOnAnotherLineIsRefusedNamingBoth() {
        for (String v : new String[] {"4.0.8", "4.1.2", "4.20.1", "5.0.0", "4.2", "42.0.1", ""}) {
            String why = line42.refusal(v).orElseThrow(() -> new AssertionError(v + " accepted"));
            assertTrue(why.contains("built for the Pulsar 4.2 line") && why.contains("4.2.4")
                    && why.contains("runs Pulsar " + v + "."), why);
        }
        assertTrue(line42.refusal(null).orElseThrow().contains("runs Pulsar (unknown)"));
    }
}
