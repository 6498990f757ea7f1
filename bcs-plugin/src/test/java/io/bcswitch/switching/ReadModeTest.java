package io.bcswitch.switching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.registry.RegistryException;
import org.junit.jupiter.api.Test;

/** Setting a read mode: DUAL_READ in any spelling; the two others refused with what to do instead; others unknown. */
class ReadModeTest {
    @Test
    void dualReadIsTheOnlyModeAndTheOthersSayWhatToDoInstead() {
        assertEquals(ReadMode.DUAL_READ, ReadMode.set("DUAL_READ"));
        assertEquals(ReadMode.DUAL_READ, ReadMode.set(" dual_read "));
        assertEquals(ReadMode.DUAL_READ, ReadMode.CURRENT);

        RegistryException old = assertThrows(RegistryException.class, () -> ReadMode.set("old_cluster_only"));
        assertEquals(RegistryException.Kind.CONFLICT, old.kind());
        assertTrue(old.getMessage().startsWith("read mode OLD_CLUSTER_ONLY is not supported"), old.getMessage());
        assertTrue(old.getMessage().contains("use 'rollback'"), old.getMessage());
        RegistryException neu = assertThrows(RegistryException.class, () -> ReadMode.set("NEW_CLUSTER_ONLY"));
        assertEquals(RegistryException.Kind.CONFLICT, neu.kind());
        assertTrue(neu.getMessage().contains("'drain-report'"), neu.getMessage());

        for (String unknown : new String[] {"", "DUAL", null}) {
            RegistryException e = assertThrows(RegistryException.class, () -> ReadMode.set(unknown));
            assertEquals(RegistryException.Kind.INVALID, e.kind());
            assertEquals("unknown read mode '" + unknown + "' (read modes: DUAL_READ, OLD_CLUSTER_ONLY, "
                    + "NEW_CLUSTER_ONLY)", e.getMessage());
        }
    }
}
