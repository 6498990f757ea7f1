package io.bcswitch.registration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.concurrent.Failures;
import io.bcswitch.concurrent.TestWaits;
import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerKind;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.precheck.ClusterLocation;
import io.bcswitch.precheck.ClusterProbe;
import io.bcswitch.precheck.InMemoryBookieClusters;
import io.bcswitch.precheck.SwitchPrecheck;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.ClusterNames;
import io.bcswitch.registry.ClusterStatus;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.InMemoryMetadataPort;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.RangeTable;
import io.bcswitch.registry.RegistryException;
import io.bcswitch.registry.RegistryPaths;
import io.bcswitch.registry.RegistryStore;
import io.bcswitch.registry.RegistryView;
import io.bcswitch.registry.Relocation;
import io.bcswitch.registry.ScriptedPort;
import io.bcswitch.registry.SwitchDirective;
import io.bcswitch.registry.Versioned;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Registering and unregistering bookie clusters over an in-memory registry and in-memory bookie clusters a (active,
 * the bootstrap range), b and c (standby): which requests are refused and why, what is stored, and what an
 * unregistration that loses a race to a concurrent change leaves in the store.
 */
class ClusterRegistrationTest {
    private static final long NOW = 1_800_000_000_000L;
    /** b's range when a test gives it one: the ids a switch to b (epoch 1) issued. */
    private static final long B_FIRST = 1L << 32;

    private final ScriptedPort port = new ScriptedPort();
    private final RegistryStore registry = new RegistryStore(port, new RegistryPaths("/bcs"));
    private final InMemoryBookieClusters bookies = new InMemoryBookieClusters();
    private final Clock clock = Clock.fixed(Instant.ofEpochMilli(NOW), ZoneOffset.UTC);
    private final SwitchPrecheck prechecks = new SwitchPrecheck(registry, bookies.access(), 2, clock,
            ClusterProbe.NONE);
    /** What the broker cluster references: the inventory answers it unless a test scripts another answer. */
    private final List<LedgerReference> refs = new CopyOnWriteArrayList<>();
    private final AtomicInteger inventoryReads = new AtomicInteger();
    /**
     * Done (asynchronously: the in-memory store has one thread, which runs this) when the inventory is read, i.e.
     * after unregister read the record and the registry and before it deletes the record: a concurrent change.
     */
    private volatile Supplier<CompletableFuture<?>> meanwhile = () -> CompletableFuture.completedFuture(null);
    private final LedgerInventory inventory = () -> {
        inventoryReads.incrementAndGet();
        return meanwhile.get().thenApply(v -> List.copyOf(refs));
    };
    private final ClusterRegistration registration = new ClusterRegistration(registry, prechecks, inventory, clock);

    @BeforeEach
    void setUp() {
        bookies.registerAll(registry, "a", "b", "c");
    }

    @AfterEach
    void tearDown() {
        bookies.close();
        port.close();
    }

    private static <T> T done(CompletableFuture<T> f) throws Exception {
        return f.get(TestWaits.SECONDS, TimeUnit.SECONDS);
    }

    /** The refusal {@code f} fails with, checked to be of {@code kind}. */
    private static RegistryException refused(RegistryException.Kind kind, CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> done(f));
        RegistryException r = assertInstanceOf(RegistryException.class, Failures.unwrap(e), e.toString());
        assertEquals(kind, r.kind(), r.getMessage());
        return r;
    }

    private String path(String cluster) {
        return registry.paths().cluster(cluster);
    }

    private Optional<BookieClusterRecord> stored(String cluster) throws Exception {
        return done(registry.getCluster(cluster));
    }

    private long version(String path) throws Exception {
        return done(registry.read(path, BookieClusterRecord.class)).version();
    }

    /** Every node of the registry (path -> version and bytes): equal before and after, a refusal changed nothing. */
    private Map<String, String> registryNodes() throws Exception {
        InMemoryMetadataPort memory = port.memory();
        Map<String, String> out = new TreeMap<>();
        List<String> todo = new ArrayList<>(List.of(registry.paths().root()));
        while (!todo.isEmpty()) {
            String p = todo.remove(todo.size() - 1);
            out.put(p, done(memory.get(p)).map(n -> n.version() + ":" + new String(n.value(), StandardCharsets.UTF_8))
                    .orElse("<no node>"));
            done(memory.children(p)).forEach(c -> todo.add(p + "/" + c));
        }
        return out;
    }

    private void write(String path, Object value) throws Exception {
        long v = done(port.memory().get(path)).map(n -> n.version()).orElse(-1L);
        done(registry.write(path, value, v));
    }

    /** b owns the ids from {@link #B_FIRST} on, as after a switch to b and back to a (no directive kept here). */
    private void giveBARange() throws Exception {
        write(registry.paths().ranges(), RangeTable.bootstrap("a", 1).with(new IdRange("b", B_FIRST, 1, 2)));
    }

    private static BookieClusterRecord standby(String name, long registeredAt, String instanceId) {
        return new BookieClusterRecord(1, name, InMemoryBookieClusters.uri(name), ClusterStatus.STANDBY,
                registeredAt, instanceId);
    }

    // ---- register ----

    @Test
    void aNewClusterIsStoredAsStandbyWithItsInstanceIdAndTheTimeOfRegistration() throws Exception {
        bookies.add("d", InMemoryBookieClusters.HIERARCHICAL, "id-d", 3, 0, 0);
        BookieClusterRecord rec = done(registration.register("d", InMemoryBookieClusters.uri("d")));

        assertEquals(standby("d", NOW, "id-d"), rec);
        assertEquals(Optional.of(rec), stored("d"));
        assertEquals(0, version(path("d")), "created, not overwritten");
        assertEquals(List.of("a", "b", "c", "d"), done(registration.list()).stream().map(BookieClusterRecord::name)
                .toList());
    }

    @Test
    void aClusterWhoseMetadataHasNoInstanceIdIsRegisteredWithoutOne() throws Exception {
        // an empty INSTANCEID reads as none: nothing to compare with the records (which all have one)
        bookies.add("e", InMemoryBookieClusters.HIERARCHICAL, "", 3, 0, 0);
        assertEquals(standby("e", NOW, null), done(registration.register("e", InMemoryBookieClusters.uri("e"))));
        assertNull(stored("e").orElseThrow().instanceId());
    }

    @Test
    void aBadNameOrUriIsRefusedAsInvalidBeforeAnythingIsRead() throws Exception {
        Map<String, String> before = registryNodes();
        for (String name : new String[] {"", "a/b", "..", "status"}) {
            RegistryException r = refused(RegistryException.Kind.INVALID,
                    registration.register(name, InMemoryBookieClusters.uri("d")));
            assertEquals(ClusterNames.problem(name), r.getMessage());
        }
        String bad = "http://d:2181/ledgers";
        IllegalArgumentException why = assertThrows(IllegalArgumentException.class, () -> ClusterLocation.parse(bad));
        assertEquals(why.getMessage(), refused(RegistryException.Kind.INVALID, registration.register("d", bad))
                .getMessage());
        assertEquals(before, registryNodes());
    }

    @Test
    void aNameAlreadyRegisteredIsAConflict() throws Exception {
        bookies.add("d", InMemoryBookieClusters.HIERARCHICAL, "id-d", 3, 0, 0);
        Map<String, String> before = registryNodes();
        // a different cluster under b's name: refused for the name, b's record untouched
        assertEquals("bookie cluster 'b' is already registered", refused(RegistryException.Kind.CONFLICT,
                registration.register("b", InMemoryBookieClusters.uri("d"))).getMessage());
        assertEquals(before, registryNodes());
    }

    @Test
    void anotherSpellingOfARegisteredClustersUriIsAConflictNamingThatCluster() throws Exception {
        Map<String, String> before = registryNodes();
        // same servers and ledgers root as b's zk+hierarchical://b:2181/ledgers
        String sameAsB = "zk://b:2181/ledgers/";
        assertEquals("metadataServiceUri " + sameAsB + " names the same bookie cluster (ZooKeeper servers and ledgers "
                        + "root) as registered cluster 'b' (" + InMemoryBookieClusters.uri("b") + ")",
                refused(RegistryException.Kind.CONFLICT, registration.register("d", sameAsB)).getMessage());
        assertEquals(before, registryNodes());
    }

    @Test
    void aClusterWhoseMetadataDoesNotAnswerIsRefusedAsInvalid() throws Exception {
        Map<String, String> before = registryNodes();
        String uri = InMemoryBookieClusters.uri("d"); // no store for d: the connection is refused
        String message = refused(RegistryException.Kind.INVALID, registration.register("d", uri)).getMessage();
        assertTrue(message.startsWith("cannot read bookie cluster metadata at " + uri + ": "), message);
        assertTrue(message.contains("connection refused by zk:d:2181"), message);
        assertEquals(before, registryNodes());
    }

    @Test
    void aRegisteredBookieClusterUnderAnotherUriIsRecognisedByItsInstanceId() throws Exception {
        // d's servers differ from b's, but its metadata says it is b's instance (another address of the same servers)
        bookies.add("d", InMemoryBookieClusters.HIERARCHICAL, "id-b", 3, 0, 0);
        Map<String, String> before = registryNodes();
        String uri = InMemoryBookieClusters.uri("d");
        assertEquals("metadataServiceUri " + uri + " is bookie cluster instance id-b, already registered as 'b' ("
                        + InMemoryBookieClusters.uri("b") + ")",
                refused(RegistryException.Kind.CONFLICT, registration.register("d", uri)).getMessage());
        assertEquals(before, registryNodes());
    }

    @Test
    void aRecordWithoutInstanceIdIsComparedByWhatItsMetadataSaysNow() throws Exception {
        // b and c were registered before instance ids were kept; their metadata says id-b and id-c
        write(path("b"), standby("b", 1, null));
        write(path("c"), standby("c", 1, null));
        bookies.add("d", InMemoryBookieClusters.HIERARCHICAL, "id-c", 3, 0, 0);
        bookies.add("e", InMemoryBookieClusters.HIERARCHICAL, "id-e", 3, 0, 0);

        assertEquals("metadataServiceUri " + InMemoryBookieClusters.uri("d") + " is bookie cluster instance id-c, "
                + "already registered as 'c' (" + InMemoryBookieClusters.uri("c") + ")",
                refused(RegistryException.Kind.CONFLICT, registration.register("d", InMemoryBookieClusters.uri("d")))
                        .getMessage());
        assertFalse(stored("d").isPresent());
        // an instance none of them is: registered
        assertEquals(standby("e", NOW, "id-e"), done(registration.register("e", InMemoryBookieClusters.uri("e"))));
    }

    @Test
    void aRecordWithoutInstanceIdWhoseMetadataCannotBeReadDoesNotBlockRegistration() throws Exception {
        // 'old' has no store (it is gone): compared by its URI only, which differs
        write(path("old"), standby("old", 1, null));
        bookies.add("d", InMemoryBookieClusters.HIERARCHICAL, "id-d", 3, 0, 0);
        assertEquals(standby("d", NOW, "id-d"), done(registration.register("d", InMemoryBookieClusters.uri("d"))));
    }

    @Test
    void aConcurrentRegistrationOfTheSameNameWinsAndThisOneIsAConflict() throws Exception {
        bookies.add("d", InMemoryBookieClusters.HIERARCHICAL, "id-d", 3, 0, 0);
        port.hold(p -> p.equals(path("d")));
        CompletableFuture<BookieClusterRecord> registering = registration.register("d",
                InMemoryBookieClusters.uri("d"));
        assertEquals(path("d"), port.held().get(TestWaits.SECONDS, TimeUnit.SECONDS), "its write waits");
        // the other broker's registration of d, straight into the store (the held port would make it wait too)
        BookieClusterRecord other = standby("d", 7, "id-d");
        done(port.memory().put(path("d"), io.bcswitch.registry.Json.write(other), Optional.of(-1L), false));
        port.release();

        assertEquals("bookie cluster 'd' is already registered",
                refused(RegistryException.Kind.CONFLICT, registering).getMessage());
        assertEquals(Optional.of(other), stored("d"), "the winner's record stands");
    }

    @Test
    void aWriteTheStoreRefusesFailsTheRegistrationWithThatError() throws Exception {
        bookies.add("d", InMemoryBookieClusters.HIERARCHICAL, "id-d", 3, 0, 0);
        port.failWrites(p -> p.equals(path("d")));
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> done(registration.register("d", InMemoryBookieClusters.uri("d"))));
        // not a registry refusal (the name is not taken): the store's own failure
        Throwable cause = Failures.unwrap(e);
        assertInstanceOf(IllegalStateException.class, cause, e.toString());
        assertEquals("write of " + path("d") + " failed", cause.getMessage());
        port.failWrites(p -> false);
        assertFalse(stored("d").isPresent());
    }

    // ---- get, list ----

    @Test
    void getAnswersARegisteredClusterAndRefusesABadOrUnknownName() throws Exception {
        assertEquals(standby("b", 1, "id-b"), done(registration.get("b")));
        assertEquals("bookie cluster 'd' is not registered",
                refused(RegistryException.Kind.NOT_FOUND, registration.get("d")).getMessage());
        assertEquals(ClusterNames.problem("a b"),
                refused(RegistryException.Kind.INVALID, registration.get("a b")).getMessage());
        assertEquals(List.of("a", "b", "c"), done(registration.list()).stream().map(BookieClusterRecord::name)
                .toList());
    }

    // ---- unregister ----

    @Test
    void aStandbyClusterThatNeverOwnedIdsIsUnregisteredWithoutReadingTheInventory() throws Exception {
        BookieClusterRecord c = stored("c").orElseThrow();
        assertEquals(c, done(registration.unregister("c")));
        assertFalse(stored("c").isPresent());
        assertEquals(0, inventoryReads.get(), "a cluster that owns no id cannot hold a referenced ledger");
        assertEquals(List.of("a", "b"), done(registration.list()).stream().map(BookieClusterRecord::name).toList());
    }

    @Test
    void aBadOrUnknownNameIsRefused() throws Exception {
        Map<String, String> before = registryNodes();
        assertEquals(ClusterNames.problem("switch"),
                refused(RegistryException.Kind.INVALID, registration.unregister("switch")).getMessage());
        assertEquals("bookie cluster 'd' is not registered",
                refused(RegistryException.Kind.NOT_FOUND, registration.unregister("d")).getMessage());
        assertEquals(before, registryNodes());
    }

    @Test
    void theActiveClusterStaysRegistered() throws Exception {
        Map<String, String> before = registryNodes();
        assertEquals("bookie cluster 'a' is the active cluster; switch to another cluster first",
                refused(RegistryException.Kind.CONFLICT, registration.unregister("a")).getMessage());
        assertEquals(before, registryNodes());
    }

    @Test
    void theTargetOfTheLatestSwitchIsActiveBeforeItsRecordSaysSo() throws Exception {
        // switch a -> b committed; the follow-up that marks b's record ACTIVE has not run yet
        write(registry.paths().switchTarget(), new SwitchDirective(1, "b", "a", 1, 2, B_FIRST));
        Map<String, String> before = registryNodes();
        assertEquals("bookie cluster 'b' is the active cluster; switch to another cluster first",
                refused(RegistryException.Kind.CONFLICT, registration.unregister("b")).getMessage());
        assertEquals(before, registryNodes());
    }

    @Test
    void aRecordMarkedActiveStaysRegisteredEvenIfTheRegistryNamesAnotherActiveCluster() throws Exception {
        write(path("c"), standby("c", 1, "id-c").withStatus(ClusterStatus.ACTIVE));
        Map<String, String> before = registryNodes();
        refused(RegistryException.Kind.CONFLICT, registration.unregister("c"));
        assertEquals(before, registryNodes());
    }

    @Test
    void aClusterOwningReferencedLedgersIsRefusedWithACountByKindAndAnExample() throws Exception {
        giveBARange();
        refs.add(new LedgerReference(3, LedgerKind.DATA, "t/ns/persistent/a-only")); // a's: not counted
        refs.add(new LedgerReference(B_FIRST + 9, LedgerKind.CURSOR, "t/ns/persistent/x/sub"));
        refs.add(new LedgerReference(B_FIRST + 5, LedgerKind.DATA, "t/ns/persistent/x"));
        refs.add(new LedgerReference(B_FIRST + 6, LedgerKind.DATA, "t/ns/persistent/y"));
        refs.add(new LedgerReference(B_FIRST + 7, LedgerKind.SCHEMA, "t/ns/x"));
        Map<String, String> before = registryNodes();

        assertEquals("bookie cluster 'b' still holds ledgers the brokers reference: 2 data, 1 cursor, 1 schema (e.g. "
                        + "ledger " + (B_FIRST + 9) + " of t/ns/persistent/x/sub); they must be migrated or expire "
                        + "first",
                refused(RegistryException.Kind.CONFLICT, registration.unregister("b")).getMessage());
        assertEquals(before, registryNodes());

        // once none of b's ledgers is referenced, b can go
        refs.removeIf(r -> r.ledgerId() >= B_FIRST);
        assertEquals(standby("b", 1, "id-b"), done(registration.unregister("b")));
        assertFalse(stored("b").isPresent());
        assertEquals(2, inventoryReads.get());
    }

    @Test
    void aClusterThatIsTheHomeOfARelocatedLedgerIsRefusedWhileItIsReferenced() throws Exception {
        // c owns no range, but ledger 3 (issued by a) was copied to c and is read there
        done(registry.updateRelocations(List.of(3L), (id, cur) -> Optional.of(new Relocation(
                Relocation.FORMAT_VERSION, 3, "c", "a", "CURSOR", 1, 2))));
        refs.add(new LedgerReference(3, LedgerKind.CURSOR, "t/ns/persistent/x/sub"));
        Map<String, String> before = registryNodes();
        assertEquals("bookie cluster 'c' still holds ledgers the brokers reference: 1 cursor (e.g. ledger 3 of "
                        + "t/ns/persistent/x/sub); they must be migrated or expire first",
                refused(RegistryException.Kind.CONFLICT, registration.unregister("c")).getMessage());
        assertEquals(before, registryNodes());

        refs.clear();
        assertEquals(standby("c", 1, "id-c"), done(registration.unregister("c")));
        assertFalse(stored("c").isPresent());

        // b is neither an owner nor a home: an inventory that cannot be read does not stand in its way
        meanwhile = () -> CompletableFuture.failedFuture(new IllegalStateException("topics unreadable"));
        assertEquals(standby("b", 1, "id-b"), done(registration.unregister("b")));
        assertEquals(2, inventoryReads.get(), "read for c only");
    }

    @Test
    void anInventoryThatCannotBeReadRefusesToUnregisterAClusterOwningIds() throws Exception {
        giveBARange();
        meanwhile = () -> CompletableFuture.failedFuture(new IllegalStateException("topics unreadable"));
        ExecutionException e = assertThrows(ExecutionException.class, () -> done(registration.unregister("b")));
        assertEquals("topics unreadable", Failures.unwrap(e).getMessage());
        assertTrue(stored("b").isPresent(), "not known to hold nothing referenced: kept");
    }

    @Test
    void aRecordChangedAfterItWasReadIsNotDeleted() throws Exception {
        giveBARange();
        BookieClusterRecord changed = standby("b", 1, "id-b2");
        // another broker rewrites b's record while this call reads the inventory
        meanwhile = () -> registry.write(path("b"), changed, 0);
        assertEquals("bookie cluster 'b' changed concurrently; retry",
                refused(RegistryException.Kind.CONFLICT, registration.unregister("b")).getMessage());
        assertEquals(Optional.of(changed), stored("b"));
    }

    @Test
    void aFirstSwitchMadeMeanwhilePutsTheRecordBack() throws Exception {
        giveBARange();
        // decided under no directive: a switch to b committed before the deletion is confirmed wins
        meanwhile = () -> registry.write(registry.paths().switchTarget(),
                new SwitchDirective(1, "b", "a", 1, 2, 2L << 32), -1);
        assertEquals("a switch or a rollback involving bookie cluster 'b' was made while it was unregistered; it stays "
                        + "registered (see status)",
                refused(RegistryException.Kind.CONFLICT, registration.unregister("b")).getMessage());
        assertEquals(Optional.of(standby("b", 1, "id-b")), stored("b"), "registered again");
    }

    @Test
    void aRollbackIntentRecordedMeanwhileKeepsTheClusterItGoesBackTo() throws Exception {
        // switch a -> b (epoch 1); a is now standby, the origin a rollback of that switch would go back to
        write(registry.paths().switchTarget(), new SwitchDirective(1, "b", "a", 1, 2, B_FIRST));
        write(path("a"), standby("a", 1, "id-a"));
        String state = registry.paths().orchestrator(1);
        // the migration of epoch 1 starts (its state is a rollback's compare-and-set point) while a is unregistered
        meanwhile = () -> registry.write(state, MigrationState.start(1, "b", "broker-1", NOW), -1);
        refused(RegistryException.Kind.CONFLICT, registration.unregister("a"));
        assertEquals(Optional.of(standby("a", 1, "id-a")), stored("a"), "registered again");
        assertEquals(1, inventoryReads.get(), "a owns the bootstrap range");
    }

    @Test
    void theOriginOfAnUnchangedSwitchIsUnregistered() throws Exception {
        write(registry.paths().switchTarget(), new SwitchDirective(1, "b", "a", 1, 2, B_FIRST));
        write(path("a"), standby("a", 1, "id-a"));
        write(registry.paths().orchestrator(1), MigrationState.start(1, "b", "broker-1", NOW));
        assertEquals(standby("a", 1, "id-a"), done(registration.unregister("a")));
        assertFalse(stored("a").isPresent());
    }

    @Test
    void aMigrationStateChangeDoesNotKeepAClusterNoRollbackGoesBackTo() throws Exception {
        write(registry.paths().switchTarget(), new SwitchDirective(1, "b", "a", 1, 2, B_FIRST));
        // c is neither target nor origin: only the directive is what its unregistration is decided under
        port.hold(p -> p.equals(path("c")));
        CompletableFuture<BookieClusterRecord> unregistering = registration.unregister("c");
        port.held().get(TestWaits.SECONDS, TimeUnit.SECONDS);
        done(registry.write(registry.paths().orchestrator(1), MigrationState.start(1, "b", "broker-1", NOW), -1));
        port.release();
        assertEquals(standby("c", 1, "id-c"), done(unregistering));
        assertFalse(stored("c").isPresent());
    }

    // ---- pinnedBy ----

    @Test
    void pinnedByCountsTheReferencesReadFromTheClusterInKindOrder() {
        RangeTable table = RangeTable.bootstrap("a", 1).with(new IdRange("b", B_FIRST, 1, 2));
        // ledger B_FIRST + 1 was issued by b but is read from c now; ledger 4 was issued by a and is read from b
        Map<Long, Relocation> relocations = Map.of(
                B_FIRST + 1, new Relocation(1, B_FIRST + 1, "c", "b", "DATA", 2, 3),
                4L, new Relocation(1, 4, "b", "a", "COMPACTION", 1, 3));
        RegistryView view = new RegistryView(table, relocations, 0, Versioned.absent(), "a");
        List<LedgerReference> all = List.of(
                new LedgerReference(B_FIRST + 1, LedgerKind.DATA, "t1"),
                new LedgerReference(B_FIRST + 2, LedgerKind.OTHER, "t2/sub"),
                new LedgerReference(4, LedgerKind.COMPACTION, "t3"),
                new LedgerReference(B_FIRST + 3, LedgerKind.OTHER, "t4/sub"),
                new LedgerReference(B_FIRST + 4, LedgerKind.DATA, "t5"),
                new LedgerReference(5, LedgerKind.SCHEMA, "s6"));

        assertEquals("1 data, 1 compaction, 2 other (e.g. ledger " + (B_FIRST + 2) + " of t2/sub)",
                ClusterRegistration.pinnedBy(all, view, "b"));
        assertEquals("1 data (e.g. ledger " + (B_FIRST + 1) + " of t1)", ClusterRegistration.pinnedBy(all, view, "c"));
        assertEquals("1 schema (e.g. ledger 5 of s6)", ClusterRegistration.pinnedBy(all, view, "a"));
        assertNull(ClusterRegistration.pinnedBy(all, view, "d"), "nothing read from d");
        assertNull(ClusterRegistration.pinnedBy(List.of(), view, "b"));
    }
}
