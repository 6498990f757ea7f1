package io.bcswitch.it.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.testkit.TestBookieCluster;
import io.bcswitch.testkit.TestCluster;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats.LedgerInfo;

/** Compares where each ledger really is (asked of every bookie cluster) with what the range table says. */
public final class Placement {
    private Placement() {
    }

    /** Owner of {@code ledgerId} according to the {@code ranges} array of a status report. */
    public static String owner(JsonNode ranges, long ledgerId) {
        String owner = null;
        for (JsonNode r : ranges) {
            if (r.get("firstLedgerId").asLong() <= ledgerId) {
                owner = r.get("cluster").asText();
            }
        }
        return owner;
    }

    /**
     * {@code perBroker} new topics of {@code namespace} owned by each broker of {@code cluster} (names {@code
     * prefix0}, {@code prefix1}, ...: created until each broker owns enough), listed broker by broker. Fails when
     * some broker never gets one: a test meant to involve every broker would otherwise pass on one.
     */
    public static List<String> topicsOwnedByEach(TestCluster cluster, PulsarAdmin admin, String namespace,
                                                 String prefix, int perBroker) throws Exception {
        java.util.Map<String, List<String>> byOwner = new java.util.LinkedHashMap<>();
        for (int b = 0; b < cluster.brokerCount(); b++) {
            byOwner.put(cluster.broker(b).brokerServiceUrl(), new ArrayList<>());
        }
        for (int i = 0; i < 64 && byOwner.values().stream().anyMatch(l -> l.size() < perBroker); i++) {
            String t = "persistent://" + namespace + "/" + prefix + i;
            admin.topics().createNonPartitionedTopic(t);
            List<String> owned = byOwner.get(admin.lookups().lookupTopic(t));
            if (owned != null && owned.size() < perBroker) {
                owned.add(t);
            }
        }
        List<String> out = new ArrayList<>();
        byOwner.forEach((broker, owned) -> {
            org.junit.jupiter.api.Assertions.assertEquals(perBroker, owned.size(), "topics owned by " + broker
                    + " among 64: " + byOwner);
            out.addAll(owned);
        });
        return out;
    }

    /** Ledger ids of {@code topic}, oldest first. */
    public static List<Long> ledgers(PulsarAdmin admin, String topic) throws Exception {
        List<Long> ids = new ArrayList<>();
        for (LedgerInfo l : admin.topics().getInternalStats(topic).ledgers) {
            ids.add(l.ledgerId);
        }
        return ids;
    }

    /**
     * Asserts that every ledger of every topic exists on exactly the cluster the range table names,
     * and that ledger ids increase within each topic. Returns the owner of each topic's ledgers.
     */
    public static Map<String, List<String>> assertPlacement(TestCluster cluster, PulsarAdmin admin, JsonNode status,
                                                            List<String> topics) throws Exception {
        Map<String, Set<Long>> onCluster = new HashMap<>();
        for (TestBookieCluster bc : cluster.bookieClusters()) {
            onCluster.put(bc.name(), bc.ledgerIds());
        }
        Map<String, List<String>> owners = new HashMap<>();
        for (String topic : topics) {
            List<Long> ids = ledgers(admin, topic);
            List<String> o = new ArrayList<>();
            long previous = -1;
            for (long id : ids) {
                assertTrue(id > previous, topic + ": ledger ids must strictly increase: " + ids);
                previous = id;
                String expected = owner(status.get("ranges"), id);
                o.add(expected);
                for (Map.Entry<String, Set<Long>> e : onCluster.entrySet()) {
                    assertEquals(e.getKey().equals(expected), e.getValue().contains(id),
                            topic + ": ledger " + id + " (range table owner " + expected + ") on " + e.getKey());
                }
            }
            owners.put(topic, o);
        }
        return owners;
    }
}
