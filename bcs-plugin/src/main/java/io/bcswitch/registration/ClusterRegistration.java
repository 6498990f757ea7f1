package io.bcswitch.registration;

import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.precheck.ClusterLocation;
import io.bcswitch.precheck.SwitchPrecheck;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.ClusterNames;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.ConfirmedChange;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import io.bcswitch.registry.SwitchDirective;
import io.bcswitch.registry.Versioned;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registering and unregistering bookie clusters: the checks that keep the registry sound (a name is one cluster, a
 * cluster has one name, a cluster that still holds referenced ledgers stays registered).
 */
public class ClusterRegistration {
    private static final Logger log = LoggerFactory.getLogger(ClusterRegistration.class);

    private final RegistryStore registry;
    private final SwitchPrecheck prechecks;
    private final LedgerInventory inventory;
    private final Clock clock;
    private final ConfirmedChange confirmed;

    /**
     * @param prechecks reads a cluster's metadata (a cluster registers only if it answers)
     * @param inventory the ledgers the broker cluster references (a cluster holding one is not unregistered)
     */
    public ClusterRegistration(RegistryStore registry, SwitchPrecheck prechecks, LedgerInventory inventory,
                               Clock clock) {
        this.registry = registry;
        this.prechecks = prechecks;
        this.inventory = inventory;
        this.clock = clock;
        this.confirmed = new ConfirmedChange(registry);
    }

    /**
     * Unregisters {@code name}. Refused (409) for the active cluster (or the target of the latest
     * switch) and for a cluster that owns, by the range table, a ledger the broker cluster still
     * references: unregistering it would leave those ledgers unroutable. The record is deleted with a
     * version check, so a concurrent change to it makes this call fail instead of losing that change; and it is
     * decided under the switch directive (and, for the cluster a rollback of the latest switch would go back to,
     * that switch's migration state) read first, as a {@link ConfirmedChange}: a switch to it, or a rollback's intent
     * to go back to it, made meanwhile puts the record back and refuses this call, one made after it is refused.
     */
    public CompletableFuture<BookieClusterRecord> unregister(String name) {
        String problem = ClusterNames.problem(name);
        if (problem != null) {
            return CompletableFuture.failedFuture(RegistryException.invalid(problem));
        }
        String path = registry.paths().cluster(name);
        return registry.readDirective().thenCompose(d -> underDirective(d, name).thenCompose(under ->
                registry.read(path, BookieClusterRecord.class).thenCompose(rec -> {
            if (!rec.present()) {
                throw RegistryException.notFound("bookie cluster '" + name + "' is not registered");
            }
            return RegistryView.read(registry).thenCompose(view -> {
                if (name.equals(view.activeCluster()) || rec.value().status() == ClusterStatus.ACTIVE) {
                    throw RegistryException.conflict("bookie cluster '" + name + "' is the active cluster; switch "
                            + "to another cluster first");
                }
                boolean ownsRange = view.ranges().ranges().stream().anyMatch(r -> r.cluster().equals(name))
                        || view.relocations().values().stream().anyMatch(r -> r.home().equals(name));
                if (!ownsRange) {
                    return CompletableFuture.completedFuture(view);
                }
                return inventory.references().thenApply(refs -> {
                    String pinned = pinnedBy(refs, view, name);
                    if (pinned != null) {
                        throw RegistryException.conflict("bookie cluster '" + name + "' still holds ledgers the "
                                + "brokers reference: " + pinned + "; they must be migrated or expire first");
                    }
                    return view;
                });
            }).thenCompose(t -> confirmed.change(path, rec, Optional.empty(), under)).thenApply(outcome -> {
                switch (outcome) {
                    case NODE_CHANGED -> throw RegistryException.conflict("bookie cluster '" + name + "' changed "
                            + "concurrently; retry");
                    case OVERTAKEN -> throw RegistryException.conflict("a switch or a rollback involving bookie "
                            + "cluster '" + name + "' was made while it was unregistered; it stays registered "
                            + "(see status)");
                    default -> {
                        log.info("bookie-cluster={} unregistered", name);
                        return rec.value();
                    }
                }
            });
        })));
    }

    /**
     * The nodes an unregistration is decided under: the directive {@code d}, and the migration state of its switch when
     * {@code name} is the cluster a rollback of it would go back to (its origin).
     */
    private CompletableFuture<List<ConfirmedChange.Under>> underDirective(Versioned<SwitchDirective> d, String name) {
        return ConfirmedChange.underSwitch(registry, d).thenCompose(underSwitch -> {
            if (!d.present() || !name.equals(d.value().origin())) {
                return CompletableFuture.completedFuture(underSwitch);
            }
            String state = registry.paths().orchestrator(d.value().epoch());
            return registry.read(state, MigrationState.class).thenApply(s -> {
                List<ConfirmedChange.Under> all = new java.util.ArrayList<>(underSwitch);
                all.add(ConfirmedChange.Under.of(state, s));
                return all;
            });
        });
    }

    /** Summary of the references owned by {@code cluster} ("3 data, 1 cursor (e.g. ledger 7 of t1)"), or null. */
    public static String pinnedBy(List<LedgerReference> refs, RegistryView view, String cluster) {
        Map<LedgerKind, Integer> counts = new TreeMap<>();
        LedgerReference example = null;
        for (LedgerReference r : refs) {
            Optional<String> home = view.home(r.ledgerId());
            if (home.map(cluster::equals).orElse(false)) {
                counts.merge(r.kind(), 1, Integer::sum);
                if (example == null) {
                    example = r;
                }
            }
        }
        if (example == null) {
            return null;
        }
        StringBuilder sb = new StringBuilder();
        counts.forEach((k, n) -> sb.append(sb.length() == 0 ? "" : ", ").append(n).append(' ')
                .append(k.name().toLowerCase(java.util.Locale.ROOT)));
        return sb + " (e.g. ledger " + example.ledgerId() + " of " + example.referencedBy() + ")";
    }

    public CompletableFuture<List<BookieClusterRecord>> list() {
        return registry.listClusters();
    }

    public CompletableFuture<BookieClusterRecord> get(String name) {
        String problem = ClusterNames.problem(name);
        if (problem != null) {
            return CompletableFuture.failedFuture(RegistryException.invalid(problem));
        }
        return registry.getCluster(name).thenApply(c -> c.orElseThrow(() ->
                RegistryException.notFound("bookie cluster '" + name + "' is not registered")));
    }

    /**
     * Registers {@code name} as STANDBY after checking the name, the URI and that its metadata answers. A bookie
     * cluster is identified by its own instance id ({@code INSTANCEID} under its ledgers root), not by the spelling
     * of its URI: a second registration of the same bookie cluster under another name or URI is refused.
     */
    public CompletableFuture<BookieClusterRecord> register(String name, String metadataServiceUri) {
        String problem = ClusterNames.problem(name);
        if (problem != null) {
            return CompletableFuture.failedFuture(RegistryException.invalid(problem));
        }
        ClusterLocation location;
        try {
            location = ClusterLocation.parse(metadataServiceUri);
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(RegistryException.invalid(e.getMessage()));
        }
        return registry.listClusters().thenCompose(clusters -> {
            for (BookieClusterRecord c : clusters) {
                if (c.name().equals(name)) {
                    throw RegistryException.conflict("bookie cluster '" + name + "' is already registered");
                }
                if (SwitchPrecheck.sameCluster(c, location)) {
                    throw RegistryException.conflict("metadataServiceUri " + metadataServiceUri
                            + " names the same bookie cluster (ZooKeeper servers and ledgers root) as registered "
                            + "cluster '" + c.name() + "' (" + c.metadataServiceUri() + ")");
                }
            }
            return prechecks.facts(location)
                    .exceptionally(e -> {
                        throw RegistryException.invalid("cannot read bookie cluster metadata at "
                                + metadataServiceUri + ": " + SwitchPrecheck.rootMessage(e));
                    }).thenCompose(facts -> sameInstance(clusters, facts.instanceId()).thenApply(twin -> {
                        if (twin != null) {
                            throw RegistryException.conflict("metadataServiceUri " + metadataServiceUri + " is bookie "
                                    + "cluster instance " + facts.instanceId() + ", already registered as '"
                                    + twin.name() + "' (" + twin.metadataServiceUri() + ")");
                        }
                        return facts;
                    }));
        }).thenCompose(facts -> {
            BookieClusterRecord rec = new BookieClusterRecord(BookieClusterRecord.FORMAT_VERSION, name,
                    metadataServiceUri, ClusterStatus.STANDBY, clock.millis(), facts.instanceId());
            return registry.write(registry.paths().cluster(name), rec, -1L).thenApply(v -> {
                log.info("bookie-cluster={} registered STANDBY, metadataServiceUri={}, instance={}, layout={}, "
                                + "writable bookies={}", name, metadataServiceUri, facts.instanceId(),
                        facts.layoutManagerFactory(), facts.writableBookies());
                return rec;
            }).exceptionally(e -> {
                if (RegistryStore.isVersionConflict(e)) {
                    throw RegistryException.conflict("bookie cluster '" + name + "' is already registered");
                }
                throw new CompletionException(e);
            });
        });
    }

    /**
     * The registered cluster that is bookie cluster instance {@code instanceId}, or null. Records of clusters
     * registered before instance ids were kept are read (bounded by the probe timeout; one that cannot be read
     * is compared by its URI only, above).
     */
    private CompletableFuture<BookieClusterRecord> sameInstance(List<BookieClusterRecord> clusters,
                                                               String instanceId) {
        if (instanceId == null) {
            return CompletableFuture.completedFuture(null);
        }
        List<CompletableFuture<BookieClusterRecord>> each = new ArrayList<>();
        for (BookieClusterRecord c : clusters) {
            if (c.instanceId() != null) {
                each.add(CompletableFuture.completedFuture(instanceId.equals(c.instanceId()) ? c : null));
            } else {
                each.add(prechecks.facts(c).thenApply(f -> instanceId.equals(f.instanceId()) ? c : null)
                        .exceptionally(e -> null));
            }
        }
        return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply(v -> each.stream()
                .map(CompletableFuture::join).filter(java.util.Objects::nonNull).findFirst().orElse(null));
    }
}
