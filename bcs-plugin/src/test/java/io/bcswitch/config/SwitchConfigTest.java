package io.bcswitch.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class SwitchConfigTest {

    private static Properties props(String... kv) {
        Properties p = new Properties();
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(SwitchConfig.PREFIX + kv[i], kv[i + 1]);
        }
        return p;
    }

    private static void assertRejected(String key, String value, String... messageParts) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SwitchConfig.from(props(key, value)), key + "=" + value);
        assertTrue(e.getMessage().startsWith("bookieClusterSwitch." + key), e.getMessage());
        for (String part : messageParts) {
            assertTrue(e.getMessage().contains(part), e.getMessage());
        }
    }

    @Test
    void defaults() {
        SwitchConfig c = SwitchConfig.from(new Properties());
        assertEquals(new SwitchConfig("/admin/bookie-clusters", "", 150.0, true, 10), c);
        assertEquals("/admin/bookie-clusters/switch-target", c.paths().switchTarget());
        // the documented defaults are the ones applied
        assertEquals(ConfigKey.CONFIG_PATH.defaultValue(), c.configPath());
        assertEquals(Double.parseDouble(ConfigKey.CUTOVER_TOPICS_PER_SECOND.defaultValue()),
                c.cutoverTopicsPerSecond());
        assertEquals(Boolean.parseBoolean(ConfigKey.CUTOVER_ENABLED.defaultValue()), c.cutoverEnabled());
        assertEquals(Integer.parseInt(ConfigKey.PROBE_TIMEOUT_SECONDS.defaultValue()), c.probeTimeoutSeconds());
        assertEquals(3000, c.switchPrepareTimeoutMillis());
    }

    @Test
    void eachKeyIsParsed() {
        SwitchConfig c = SwitchConfig.from(props(
                "configPath", "/pulsar/bcs",
                "currentClusterName", "  east-1  ",
                "cutoverTopicsPerSecond", " 12.5 ",
                "cutoverEnabled", " FALSE ",
                "probeTimeoutSeconds", " 3 "));
        assertEquals(new SwitchConfig("/pulsar/bcs", "east-1", 12.5, false, 3), c);
        assertTrue(SwitchConfig.from(props("cutoverEnabled", "True")).cutoverEnabled());
        assertEquals(0.5, SwitchConfig.from(props("cutoverTopicsPerSecond", "0.5")).cutoverTopicsPerSecond());
        assertEquals(1, SwitchConfig.from(props("probeTimeoutSeconds", "1")).probeTimeoutSeconds());
        assertEquals(7, SwitchConfig.from(props("inventoryReadConcurrency", "7")).inventoryReadConcurrency());
        assertEquals(0, SwitchConfig.from(props("switchPrepareTimeoutMillis", "0")).switchPrepareTimeoutMillis());
        assertEquals(250, SwitchConfig.from(props("switchPrepareTimeoutMillis", "250")).switchPrepareTimeoutMillis());
    }

    @Test
    void keysWithoutThePrefixAreIgnored() {
        Properties p = new Properties();
        p.setProperty("configPath", "not-a-path");
        p.setProperty("cutoverEnabled", "maybe");
        assertEquals(SwitchConfig.from(new Properties()), SwitchConfig.from(p));
    }

    @Test
    void badValuesAreRejectedNamingTheKey() {
        assertRejected("configPath", "relative/path", "absolute");
        assertRejected("configPath", "/trailing/");
        assertRejected("configPath", "");
        assertRejected("configPath", "/");
        assertRejected("switchPrepareTimeoutMillis", "-1", "between 0 and 30000");
        assertRejected("switchPrepareTimeoutMillis", "30001", "between 0 and 30000");
        assertRejected("switchPrepareTimeoutMillis", "1.5", "not a whole number");
        assertRejected("currentClusterName", "has space", "has space");
        assertRejected("currentClusterName", "..");
        assertRejected("currentClusterName", "x".repeat(65));
        assertRejected("currentClusterName", "a/b");
        assertRejected("cutoverTopicsPerSecond", "fast", "not a number", "fast");
        assertRejected("cutoverTopicsPerSecond", "0", "> 0");
        assertRejected("cutoverTopicsPerSecond", "-5", "> 0");
        assertRejected("cutoverTopicsPerSecond", "NaN");
        assertRejected("cutoverTopicsPerSecond", "");
        assertRejected("cutoverEnabled", "yes", "true or false");
        assertRejected("cutoverEnabled", "1");
        assertRejected("cutoverEnabled", "");
        assertRejected("probeTimeoutSeconds", "ten", "not a whole number", "ten");
        assertRejected("probeTimeoutSeconds", "0", "between 1 and 3600");
        assertRejected("probeTimeoutSeconds", "-1", "between 1 and 3600");
        assertRejected("probeTimeoutSeconds", "0.5", "between 1 and 3600");
        assertRejected("inventoryReadConcurrency", "0", "between 1 and 10000");
        assertRejected("inventoryReadConcurrency", "many", "not a whole number");
    }

    @Test
    void reservedCurrentClusterNameIsRejected() {
        assertRejected("currentClusterName", "status", "reserved");
        assertRejected("currentClusterName", "switch", "reserved");
    }

    @Test
    void allKeysCoverEveryKeySwitchConfigReads() {
        Set<String> read = new HashSet<>();
        Properties recording = new Properties() {
            @Override
            public synchronized Object get(Object key) {
                read.add(String.valueOf(key));
                return super.get(key);
            }

            @Override
            public String getProperty(String key) {
                read.add(key);
                return super.getProperty(key);
            }

            @Override
            public String getProperty(String key, String def) {
                read.add(key);
                return super.getProperty(key, def);
            }
        };
        SwitchConfig.from(recording);
        Set<String> documented = ConfigKey.all().stream().map(ConfigKey::fullName).collect(Collectors.toSet());
        assertEquals(documented, read);
        assertFalse(read.isEmpty());
    }

    @Test
    void keyTableIsWellFormed() {
        Set<String> names = new HashSet<>();
        for (ConfigKey k : ConfigKey.all()) {
            assertTrue(names.add(k.name()), "duplicate key " + k.name());
            assertEquals("bookieClusterSwitch." + k.name(), k.fullName());
            assertFalse(k.doc().isBlank(), k.name());
            // each documented default is itself accepted
            SwitchConfig.from(props(k.name(), k.defaultValue()));
        }
    }

    @Test
    void thePipsInapplicableKeysAndUnknownKeysAreNamedAtStart() {
        Properties p = new Properties();
        p.setProperty(SwitchConfig.PREFIX + "skipIdgenPrecheck", "true");
        p.setProperty(SwitchConfig.PREFIX + "dualReadTimeoutDays", "15");
        p.setProperty(SwitchConfig.PREFIX + "migrationConcurency", "8"); // a typo
        p.setProperty(ConfigKey.MIGRATION_CONCURRENCY.fullName(), "8");
        p.setProperty("managedLedgerDefaultEnsembleSize", "2"); // not ours
        java.util.List<String> n = SwitchConfig.notices(p);
        assertEquals(3, n.size(), n.toString());
        assertTrue(n.get(0).startsWith("bookieClusterSwitch.skipIdgenPrecheck is set but does nothing: the precheck "
                + "cannot be skipped"), n.get(0));
        assertTrue(n.get(1).startsWith("bookieClusterSwitch.dualReadTimeoutDays is set but does nothing: a ledger "
                + "is read from the cluster that holds it"), n.get(1));
        assertEquals("bookieClusterSwitch.migrationConcurency is not a key of this plugin and is ignored (keys: "
                + "docs/configuration.md)", n.get(2));
        assertEquals(8, SwitchConfig.from(p).migration().concurrency(), "the broker starts");
        assertTrue(SwitchConfig.notices(new Properties()).isEmpty());
    }

    @Test
    void oldLedgerReadTimeoutIsAWholeNumberOfMillisecondsWithAFiveSecondDefault() {
        assertEquals(5000, SwitchConfig.from(new Properties()).oldLedgerReadTimeoutMillis());
        Properties p = new Properties();
        p.setProperty(ConfigKey.OLD_LEDGER_READ_TIMEOUT_MS.fullName(), "0");
        assertEquals(0, SwitchConfig.from(p).oldLedgerReadTimeoutMillis());
        p.setProperty(ConfigKey.OLD_LEDGER_READ_TIMEOUT_MS.fullName(), "-1");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SwitchConfig.from(p));
        assertTrue(e.getMessage().startsWith("bookieClusterSwitch.oldLedgerReadTimeoutMs must be between 0 and"),
                e.getMessage());
    }

    /** Each number key accepts both ends of its documented range and nothing past them. */
    @Test
    void everyNumberKeyAcceptsExactlyItsRange() {
        for (ConfigKey k : ConfigKey.all()) {
            switch (k.type()) {
                case WHOLE_NUMBER -> {
                    SwitchConfig.from(props(k.name(), String.valueOf(k.min())));
                    SwitchConfig.from(props(k.name(), String.valueOf(k.max())));
                    if (k.min() > Long.MIN_VALUE) {
                        assertRejected(k.name(), String.valueOf(k.min() - 1), "between");
                    }
                    if (k.max() < Long.MAX_VALUE) {
                        assertRejected(k.name(), String.valueOf(k.max() + 1), "between");
                    }
                }
                case RATE -> {
                    SwitchConfig.from(props(k.name(), String.valueOf(k.max())));
                    SwitchConfig.from(props(k.name(), "0.001"));
                    assertRejected(k.name(), String.valueOf(k.max() + 0.5), "<= " + k.max());
                    assertRejected(k.name(), "0", "> 0");
                }
                default -> {
                }
            }
        }
    }
}
