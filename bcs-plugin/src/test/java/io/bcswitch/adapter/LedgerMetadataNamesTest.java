package io.bcswitch.adapter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.bookkeeper.mledger.impl.LedgerMetadataUtils;
import org.junit.jupiter.api.Test;

/** The routing client tells data ledgers by the names the broker's managed ledgers write into ledger metadata. */
class LedgerMetadataNamesTest {
    /** Pulsar's own constants (private on the 4.0 line before 4.0.11, hence read this way). */
    private static String pulsars(String constant) throws ReflectiveOperationException {
        Field f = LedgerMetadataUtils.class.getDeclaredField(constant);
        f.setAccessible(true);
        return (String) f.get(null);
    }

    @Test
    void theNamesAreTheOnesTheBrokerWrites() throws Exception {
        assertEquals(pulsars("METADATA_PROPERTY_MANAGED_LEDGER_NAME"), RoutingBookKeeper.MANAGED_LEDGER_NAME_PROPERTY);
        assertEquals(pulsars("METADATA_PROPERTY_CURSOR_NAME"), RoutingBookKeeper.CURSOR_NAME_PROPERTY);
    }

    @Test
    void aDataLedgerIsOneWithAManagedLedgerNameAndNoCursorName() {
        byte[] ml = "tenant/ns/persistent/t".getBytes(StandardCharsets.UTF_8);
        assertEquals("tenant/ns/persistent/t",
                RoutingBookKeeper.dataLedgerOf(Map.of(RoutingBookKeeper.MANAGED_LEDGER_NAME_PROPERTY, ml)));
        assertNull(RoutingBookKeeper.dataLedgerOf(Map.of(RoutingBookKeeper.MANAGED_LEDGER_NAME_PROPERTY, ml,
                RoutingBookKeeper.CURSOR_NAME_PROPERTY, "sub".getBytes(StandardCharsets.UTF_8))));
        assertNull(RoutingBookKeeper.dataLedgerOf(Map.of("pulsar/compactedTopic", ml)));
        assertNull(RoutingBookKeeper.dataLedgerOf(null));
    }
}
