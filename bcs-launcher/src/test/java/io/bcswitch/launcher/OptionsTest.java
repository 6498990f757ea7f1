package io.bcswitch.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The launcher's options: defaults, both spellings of a value, ranges, and what an error says. */
class OptionsTest {

    @Test
    void defaultsAndValuesInBothSpellings() {
        Options d = Options.parse(new String[] {""}); // what "$*" gives when run-demo.sh has no argument
        assertFalse(d.serve);
        assertFalse(d.processes, "in this JVM unless asked");
        assertEquals(2, d.bookies);
        assertEquals(4, d.topics);
        assertEquals(5.0, d.phaseSeconds);
        assertEquals(-1, d.migrationRate);
        Options o = Options.parse(new String[] {"--serve", "--bookies", "3", "--topics=7", "--phase-seconds", "0.5",
            "--migration-rate=1000000", "--migration-concurrency", "8", "--port", "7650", "--web-port=9080", "--processes"});
        assertTrue(o.serve);
        assertEquals(3, o.bookies);
        assertEquals(7, o.topics);
        assertEquals(0.5, o.phaseSeconds);
        assertEquals(1_000_000, o.migrationRate);
        assertEquals(8, o.migrationConcurrency);
        assertEquals(7650, o.port);
        assertEquals(9080, o.webPort);
        assertTrue(o.processes);
        assertTrue(Options.parse(new String[] {"-h"}).help);
    }

    @Test
    void badOptionsSayWhatIsWrong() {
        assertTrue(error("--bookies", "4").contains("--bookies must be in 1..3: 4"));
        assertTrue(error("--topics", "many").contains("many"));
        assertTrue(error("--phase-seconds", "0.1").contains("--phase-seconds must be in 0.5..3600"));
        assertTrue(error("--port", "8080").contains("--port and --web-port must differ"));
        assertTrue(error("--no-such-option").contains("--no-such-option"));
        assertTrue(error("--rate").contains("--rate"), "a value is missing");
        assertTrue(error("--migration-concurrency", "0").contains("--migration-concurrency must be in 1..1024"));
    }

    @Test
    void usageListsEveryOption() {
        String usage = Options.usage();
        for (String o : new String[] {"--serve", "--bookies", "--port", "--web-port", "--topics", "--rate",
            "--phase-seconds", "--schema-topics", "--compacted-mb", "--migration-rate", "--migration-concurrency",
            "--help"}) {
            assertTrue(usage.contains(o), o + " in:\n" + usage);
        }
        assertTrue(usage.contains("(default 2)"), usage);
    }

    private static String error(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> Options.parse(args)).getMessage();
    }
}
