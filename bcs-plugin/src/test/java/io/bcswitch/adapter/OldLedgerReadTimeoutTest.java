package io.bcswitch.adapter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.reflect.Proxy;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.api.LedgerEntries;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.junit.jupiter.api.Test;

/** {@code oldLedgerReadTimeoutMs}: a read of a cluster that is not the active one fails once it takes too long. */
class OldLedgerReadTimeoutTest {
    private final CompletableFuture<LedgerEntries> pending = new CompletableFuture<>();

    /** A read handle whose reads answer with {@link #pending}. */
    private final ReadHandle slow = (ReadHandle) Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {ReadHandle.class}, (proxy, m, args) -> switch (m.getName()) {
                case "readAsync", "readUnconfirmedAsync" -> pending;
                case "getId" -> 7L;
                case "hashCode" -> 1;
                default -> null;
            });

    @Test
    void aReadOfAClusterThatIsNotActiveFailsWithBookKeepersTimeoutOnceItTakesTooLong() {
        AtomicLong timeout = new AtomicLong(50);
        ReadHandle h = ClusterNamedReadHandle.wrap(slow, "old", () -> { }, timeout::get);
        ExecutionException e = assertThrows(ExecutionException.class, () -> h.readAsync(0, 0).get(10,
                TimeUnit.SECONDS));
        BKException bk = assertInstanceOf(BKException.class, e.getCause());
        assertEquals(BKException.Code.TimeoutException, bk.getCode());
        assertFalse(pending.isDone(), "BookKeeper's own read is left alone");
    }

    @Test
    void withoutATimeoutTheReadIsBookKeepersOwn() throws Exception {
        ReadHandle h = ClusterNamedReadHandle.wrap(slow, "active", () -> { }, () -> 0);
        assertSame(pending, h.readAsync(0, 0), "no bound of ours: the very future BookKeeper answers");
    }

    @Test
    void aReadThatAnswersInTimeIsPassedOn() throws Exception {
        ReadHandle h = ClusterNamedReadHandle.wrap(slow, "old", () -> { }, () -> 10_000);
        CompletableFuture<LedgerEntries> read = h.readUnconfirmedAsync(0, 0);
        assertFalse(read.isDone());
        pending.complete(null);
        assertEquals(null, read.get(10, TimeUnit.SECONDS));
    }
}
