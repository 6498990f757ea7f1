package io.bcswitch.it.support;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.awaitility.core.ConditionTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Unloads an idle topic so that every cursor of it ends closed: its position in the metadata store and its
 * cursor ledger released. Pulsar's own close of a cursor can fail when it races the cursor's own metadata
 * write ("persistent position failure when closing"); the cursor ledger then stays open on its bookies, as
 * after a broker crash, and a migration rightly leaves it where it is. Tests that need a cleanly closed idle
 * topic call this instead of a bare unload, so that such a race in Pulsar cannot decide their outcome.
 */
public final class Unload {
    private static final Logger log = LoggerFactory.getLogger(Unload.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int ATTEMPTS = 4;

    private Unload() {
    }

    /** Unloads {@code topic} until its metadata names no cursor ledger; fails if it never does. */
    public static void cleanly(PulsarAdmin admin, String topic) throws Exception {
        List<String> seen = new ArrayList<>();
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            // loads the topic (again), and waits until each cursor's ledger holds its position: the unload
            // then does not race the cursor's switch to its first ledger
            await("cursor ledgers of " + topic + " written").atMost(Duration.ofSeconds(30)).until(() ->
                    admin.topics().getInternalStats(topic).cursors.values().stream()
                            .allMatch(c -> c.cursorLedger >= 0 && c.cursorLedgerLastEntry >= 0));
            admin.topics().unload(topic);
            try {
                // the managed ledger's metadata, read without loading the topic
                await("cursors of " + topic + " closed").atMost(Duration.ofSeconds(10))
                        .until(() -> openCursorLedgers(admin.topics().getInternalInfo(topic)).isEmpty());
                return;
            } catch (ConditionTimeoutException e) {
                List<String> open = openCursorLedgers(admin.topics().getInternalInfo(topic));
                seen.add("attempt " + attempt + ": " + open);
                log.warn("unload of {} left cursor ledgers open {} (Pulsar's cursor close raced its own metadata "
                        + "write): loading and unloading it again", topic, open);
            }
        }
        throw new AssertionError("unload of " + topic + " never closed its cursors: " + seen);
    }

    private static List<String> openCursorLedgers(String managedLedgerInfo) throws Exception {
        List<String> open = new ArrayList<>();
        JsonNode cursors = JSON.readTree(managedLedgerInfo).path("cursors");
        for (Iterator<Map.Entry<String, JsonNode>> it = cursors.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> c = it.next();
            long ledger = c.getValue().path("cursorsLedgerId").asLong(-1);
            if (ledger >= 0) {
                open.add(c.getKey() + "=" + ledger);
            }
        }
        return open;
    }
}
