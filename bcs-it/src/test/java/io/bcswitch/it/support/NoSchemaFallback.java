package io.bcswitch.it.support;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * For tests of schema routing ({@code @ExtendWith(NoSchemaFallback.class)}): each test fails if any schema read was
 * answered by the broker's own copy of the schema instead of the ledger routing sent it to. That copy answers when
 * the routed read fails, so without this check a wrong route would pass unnoticed.
 */
public final class NoSchemaFallback implements BeforeEachCallback, AfterEachCallback {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(NoSchemaFallback.class);

    @Override
    public void beforeEach(ExtensionContext context) {
        context.getStore(NS).put("log", LogCapture.install());
    }

    @Override
    public void afterEach(ExtensionContext context) {
        LogCapture log = context.getStore(NS).remove("log", LogCapture.class);
        try {
            assertEquals(List.of(), log.matching(List.of(LogCapture.SCHEMA_FALLBACK)),
                    "schema reads answered by the broker's copy, not by the ledger routing sent them to");
        } finally {
            log.remove();
        }
    }
}
