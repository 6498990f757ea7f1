package io.bcswitch.registry;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

/**
 * Who is live and what each live broker routes with, read in one go. A broker is live when Pulsar's own broker
 * registry lists it or when the plugin on it has a record of either kind (a broker that is starting has its
 * records before Pulsar registers it). A live broker with no record, or with a record of an older epoch, is never counted as having
 * applied anything: that is what keeps a broker that runs without the plugin, or lost its session and has not
 * re-created its records yet, from being taken for done.
 *
 * @param live     every live broker, by id
 * @param records  the plugin's record of each broker that has one
 * @param applied  the relocation epoch each broker published
 */
public record BrokerView(Set<String> live, Map<String, BrokerCutoverRecord> records, Map<String, Long> applied) {

    public BrokerView {
        live = Set.copyOf(new TreeSet<>(live));
        records = Map.copyOf(records);
        applied = Map.copyOf(applied);
    }

    public static CompletableFuture<BrokerView> read(RegistryStore registry) {
        var pulsar = registry.pulsarLiveBrokers().exceptionally(e -> Set.of());
        // the applied epochs before the records: a broker writes its record before its applied epoch, so the records
        // read afterwards are at least as new as the epochs (one session's reads are answered in order)
        var applied = registry.listRelocationApplied();
        var records = applied.thenCompose(a -> registry.listBrokerProgress());
        return CompletableFuture.allOf(pulsar, records, applied).thenApply(v -> {
            Map<String, BrokerCutoverRecord> byId = new TreeMap<>();
            records.join().forEach(r -> byId.put(r.broker(), r));
            Set<String> live = new TreeSet<>(pulsar.join());
            live.addAll(byId.keySet());
            live.addAll(applied.join().keySet());
            return new BrokerView(live, byId, applied.join());
        });
    }

    /**
     * Live brokers (Pulsar's broker registry) with no record of the plugin: they run without it, or are starting and
     * have not written it yet.
     */
    public List<String> withoutRecord() {
        return live.stream().filter(b -> !records.containsKey(b)).toList();
    }

    /** Live brokers that run without the plugin, or whose plugin has not confirmed switch {@code epoch}. */
    public List<String> notFollowing(long epoch) {
        List<String> out = new ArrayList<>();
        for (String b : live) {
            BrokerCutoverRecord r = records.get(b);
            if (r == null) {
                out.add(b + " (no bookie-cluster-switch plugin record: runs without the plugin, or is starting)");
            } else if (r.appliedEpoch() != epoch) {
                out.add(b + " (at switch epoch " + r.appliedEpoch() + ", not " + epoch
                        + (r.activationError() != null ? ": " + r.activationError() : "") + ")");
            }
        }
        return out;
    }

    /**
     * Live brokers whose record does not say they have their clients ready for the range starting at
     * {@code firstLedgerId} (see {@link SwitchPreparation}).
     */
    public List<String> notPrepared(long firstLedgerId) {
        List<String> out = new ArrayList<>();
        for (String b : live) {
            BrokerCutoverRecord r = records.get(b);
            if (r == null || r.preparedFirstLedgerId() != firstLedgerId) {
                out.add(b);
            }
        }
        return out;
    }

    /**
     * Live brokers a new switch would leave behind: those without the plugin's record (no plugin, or starting), and
     * those at another epoch than {@code epoch} for no known reason. A broker whose record shows an activation
     * error is not among them: it keeps retrying the newest directive, so a switch (or a rollback's switch back,
     * often the cure for that error) is what it follows next.
     */
    public List<String> wouldNotFollow(long epoch) {
        List<String> out = new ArrayList<>();
        for (String b : live) {
            BrokerCutoverRecord r = records.get(b);
            if (r == null) {
                out.add(b + " (no bookie-cluster-switch plugin record: runs without the plugin, or is starting)");
            } else if (r.appliedEpoch() != epoch && r.activationError() == null) {
                out.add(b + " (at switch epoch " + r.appliedEpoch() + ", not " + epoch + ")");
            }
        }
        return out;
    }

    /** Live brokers that have not applied switch {@code epoch} or still write a ledger elsewhere. */
    public List<String> cutoverPending(long epoch) {
        List<String> out = new ArrayList<>();
        for (String b : live) {
            BrokerCutoverRecord r = records.get(b);
            if (r == null || r.appliedEpoch() != epoch || !r.done()) {
                out.add(b);
            }
        }
        return out;
    }

    /** Every live broker applied switch {@code epoch} and finished its cutover (false with no live broker). */
    public boolean cutoverComplete(long epoch) {
        return !live.isEmpty() && cutoverPending(epoch).isEmpty();
    }

    /** Live brokers that do not route with relocation epoch {@code epoch} (or a later one) yet. */
    public List<String> relocationPending(long epoch) {
        List<String> out = new ArrayList<>();
        for (String b : live) {
            Long e = applied.get(b);
            if (e == null || e < epoch) {
                out.add(b);
            }
        }
        return out;
    }

    /** Live brokers that hold ledger {@code ledgerId} open on {@code cluster} (or may: more than listed). */
    public List<String> holdingOpen(String cluster, long ledgerId) {
        List<String> out = new ArrayList<>();
        records.forEach((b, r) -> {
            if (r.holdsOpen(cluster, ledgerId)) {
                out.add(b);
            }
        });
        return out;
    }

    /** Open handles on {@code cluster}, summed over live brokers, by broker. */
    public Map<String, Integer> handlesOn(String cluster) {
        Map<String, Integer> out = new TreeMap<>();
        records.forEach((b, r) -> {
            int n = r.openHandles().getOrDefault(cluster, 0);
            if (n > 0) {
                out.put(b, n);
            }
        });
        return out;
    }
}
