package io.bcswitch.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.concurrent.TestWaits;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The in-memory store against the contract, and its session expiry. */
class InMemoryMetadataPortTest extends MetadataPortContract {

    @Override
    protected MetadataPort newPort() {
        return new InMemoryMetadataPort();
    }

    @Test
    void anExpiredSessionTakesItsEphemeralNodesAndSaysSo() throws Exception {
        InMemoryMetadataPort memory = (InMemoryMetadataPort) port;
        List<MetadataPort.SessionChange> heard = new CopyOnWriteArrayList<>();
        memory.onSessionChange(heard::add);
        List<String> changed = new CopyOnWriteArrayList<>();
        memory.onChange(changed::add);
        memory.put("/t/e", new byte[] {1}, Optional.empty(), true).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        memory.put("/t/p", new byte[] {1}, Optional.empty(), false).get(TestWaits.SECONDS, TimeUnit.SECONDS);
        memory.get("/t").get(TestWaits.SECONDS, TimeUnit.SECONDS); // the writes' notifications are delivered first
        changed.clear();
        memory.expireSession().get(TestWaits.SECONDS, TimeUnit.SECONDS);
        assertTrue(memory.get("/t/e").get(TestWaits.SECONDS, TimeUnit.SECONDS).isEmpty(), "the ephemeral node is gone");
        assertTrue(memory.get("/t/p").get(TestWaits.SECONDS, TimeUnit.SECONDS).isPresent(), "the persistent one stays");
        memory.get("/t")
                .get(TestWaits.SECONDS, TimeUnit.SECONDS); // the re-established event is queued before this answer
        assertEquals(List.of(MetadataPort.SessionChange.CONNECTION_LOST, MetadataPort.SessionChange.SESSION_LOST,
                MetadataPort.SessionChange.SESSION_REESTABLISHED), heard);
        assertEquals(List.of("/t/e", "/t"), changed, "watchers hear the ephemeral node go, and its parent change");
    }
}
