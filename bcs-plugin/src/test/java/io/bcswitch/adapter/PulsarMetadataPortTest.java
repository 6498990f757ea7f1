package io.bcswitch.adapter;

import io.bcswitch.registry.MetadataPort;
import io.bcswitch.registry.MetadataPortContract;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.zookeeper.server.ServerCnxnFactory;
import org.apache.zookeeper.server.ZooKeeperServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;

/** The adapter against the contract, over Pulsar's in-memory store and over a real ZooKeeper server. */
class PulsarMetadataPortTest {

    @Nested
    class OverPulsarsMemoryStore extends MetadataPortContract {
        private int n;

        @Override
        protected MetadataPort newPort() {
            return PulsarMetadataPort.open("memory:contract-" + System.nanoTime() + "-" + n++, 30_000, "contract");
        }
    }

    private static Path zkDir;
    private static ZooKeeperServer zk;
    private static ServerCnxnFactory zkConnections;

    @BeforeAll
    static void startZooKeeper() throws IOException, InterruptedException {
        zkDir = Files.createTempDirectory("bcs-contract-zk");
        zk = new ZooKeeperServer(zkDir.resolve("snap").toFile(), zkDir.resolve("log").toFile(), 2000);
        zkConnections = ServerCnxnFactory.createFactory(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        zkConnections.startup(zk);
    }

    @AfterAll
    static void stopZooKeeper() throws IOException {
        zkConnections.shutdown();
        zk.shutdown();
        try (var files = Files.walk(zkDir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @Nested
    class OverZooKeeper extends MetadataPortContract {
        private int n;

        /** Each test in a chroot of its own: a fresh, empty store. */
        @Override
        protected MetadataPort newPort() throws Exception {
            String chroot = "/contract-" + System.nanoTime() + "-" + n++;
            String root = "zk:127.0.0.1:" + zkConnections.getLocalPort();
            try (PulsarMetadataPort setup = PulsarMetadataPort.open(root, 30_000, "contract-setup")) {
                setup.put(chroot, new byte[0], java.util.Optional.empty(), false).get(); // the chroot must exist
            }
            return PulsarMetadataPort.open(root + chroot, 30_000, "contract");
        }
    }

    @org.junit.jupiter.api.Test
    void aStoreThatLostItsSessionOrConnectionIsUnavailableAndAnythingElseIsAFailure() {
        org.junit.jupiter.api.Assertions.assertInstanceOf(io.bcswitch.registry.StoreFailure.Unavailable.class,
                PulsarMetadataPort.translate("/x", new java.util.concurrent.CompletionException(
                        new org.apache.pulsar.metadata.api.MetadataStoreException(
                                new org.apache.zookeeper.KeeperException.SessionExpiredException()))));
        org.junit.jupiter.api.Assertions.assertInstanceOf(io.bcswitch.registry.StoreFailure.Unavailable.class,
                PulsarMetadataPort.translate("/x", new org.apache.pulsar.metadata.api.MetadataStoreException(
                        new org.apache.zookeeper.KeeperException.ConnectionLossException())));
        Throwable other = PulsarMetadataPort.translate("/x", new org.apache.pulsar.metadata.api.MetadataStoreException(
                new org.apache.zookeeper.KeeperException.NoAuthException()));
        org.junit.jupiter.api.Assertions.assertEquals(io.bcswitch.registry.StoreFailure.class, other.getClass());
    }

    /** etcd's client (gRPC) says "away" with a status, in its own exception or in jetcd's; a bad request is no outage. */
    @org.junit.jupiter.api.Test
    void etcdAwayIsUnavailableAndABadRequestIsAFailure() {
        org.junit.jupiter.api.Assertions.assertInstanceOf(io.bcswitch.registry.StoreFailure.Unavailable.class,
                PulsarMetadataPort.translate("/x", new java.util.concurrent.CompletionException(
                        io.grpc.Status.UNAVAILABLE.withDescription("io exception").asRuntimeException())));
        for (Throwable bad : new Throwable[] {io.grpc.Status.INVALID_ARGUMENT.asRuntimeException(),
                new org.apache.pulsar.metadata.api.MetadataStoreException(
                        io.grpc.Status.RESOURCE_EXHAUSTED.asRuntimeException())}) {
            org.junit.jupiter.api.Assertions.assertEquals(io.bcswitch.registry.StoreFailure.class,
                    PulsarMetadataPort.translate("/x", new java.util.concurrent.CompletionException(bad)).getClass(),
                    bad.toString());
        }
        // jetcd's own exception, where the Pulsar line's class path has it (built by reflection: its API is jetcd's)
        Class<?> factory;
        Class<?> codes;
        try {
            factory = Class.forName("io.etcd.jetcd.common.exception.EtcdExceptionFactory");
            codes = Class.forName("io.etcd.jetcd.common.exception.ErrorCode");
        } catch (ClassNotFoundException absent) {
            return;
        }
        java.util.function.Function<String, Throwable> etcd = code -> {
            try {
                Object c = codes.getMethod("valueOf", String.class).invoke(null, code);
                return (Throwable) factory.getMethod("newEtcdException", codes, String.class).invoke(null, c, code);
            } catch (ReflectiveOperationException e) {
                throw new AssertionError(e);
            }
        };
        org.junit.jupiter.api.Assertions.assertInstanceOf(io.bcswitch.registry.StoreFailure.Unavailable.class,
                PulsarMetadataPort.translate("/x", new java.util.concurrent.CompletionException(
                        etcd.apply("DEADLINE_EXCEEDED"))));
        org.junit.jupiter.api.Assertions.assertEquals(io.bcswitch.registry.StoreFailure.class,
                PulsarMetadataPort.translate("/x", new java.util.concurrent.CompletionException(
                        etcd.apply("NOT_FOUND"))).getClass());
    }

    /**
     * A delete at a version of a node that is not there is "not found" whatever the store says (Pulsar's etcd store
     * says "bad version"); a node that is there at another version is a conflict.
     */
    @org.junit.jupiter.api.Test
    void aVersionedDeleteOfANodeThatIsNotThereIsNotFound() throws Exception {
        boolean[] present = new boolean[1];
        org.apache.pulsar.metadata.api.MetadataStore etcdLike = (org.apache.pulsar.metadata.api.MetadataStore)
                java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(),
                        new Class<?>[] {org.apache.pulsar.metadata.api.MetadataStore.class}, (proxy, method, args) ->
                                switch (method.getName()) {
                                    case "delete" -> java.util.concurrent.CompletableFuture.failedFuture(
                                            new org.apache.pulsar.metadata.api.MetadataStoreException
                                                    .BadVersionException("Bad version"));
                                    case "get" -> java.util.concurrent.CompletableFuture.completedFuture(
                                            present[0] ? java.util.Optional.of(new org.apache.pulsar.metadata.api
                                                    .GetResult(new byte[0], new org.apache.pulsar.metadata.api.Stat(
                                                            "/a", 7, 0, 0, false, false))) : java.util.Optional.empty());
                                    default -> throw new UnsupportedOperationException(method.getName());
                                });
        PulsarMetadataPort p = new PulsarMetadataPort(etcdLike, 5_000);
        java.util.concurrent.ExecutionException gone = org.junit.jupiter.api.Assertions.assertThrows(
                java.util.concurrent.ExecutionException.class,
                () -> p.delete("/a", java.util.Optional.of(3L)).get(10, java.util.concurrent.TimeUnit.SECONDS));
        org.junit.jupiter.api.Assertions.assertInstanceOf(io.bcswitch.registry.StoreFailure.NotFound.class,
                gone.getCause());
        present[0] = true;
        java.util.concurrent.ExecutionException moved = org.junit.jupiter.api.Assertions.assertThrows(
                java.util.concurrent.ExecutionException.class,
                () -> p.delete("/a", java.util.Optional.of(3L)).get(10, java.util.concurrent.TimeUnit.SECONDS));
        org.junit.jupiter.api.Assertions.assertInstanceOf(io.bcswitch.registry.StoreFailure.VersionConflict.class,
                moved.getCause());
    }

    /** A store that never answers (Pulsar's etcd store while etcd is gone) fails each call once its deadline passed. */
    @org.junit.jupiter.api.Test
    void aCallTheStoreNeverAnswersIsUnavailableAfterTheDeadline() {
        org.apache.pulsar.metadata.api.MetadataStore silent = (org.apache.pulsar.metadata.api.MetadataStore)
                java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(),
                        new Class<?>[] {org.apache.pulsar.metadata.api.MetadataStore.class}, (proxy, method, args) -> {
                            if (java.util.concurrent.CompletableFuture.class.isAssignableFrom(method.getReturnType())) {
                                return new java.util.concurrent.CompletableFuture<>(); // never answers
                            }
                            throw new UnsupportedOperationException(method.getName());
                        });
        PulsarMetadataPort p = new PulsarMetadataPort(silent, 100);
        for (java.util.concurrent.CompletableFuture<?> call : java.util.List.of(p.get("/a"), p.children("/a"),
                p.put("/a", new byte[0], java.util.Optional.empty(), false), p.delete("/a", java.util.Optional.of(1L)))) {
            java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                    java.util.concurrent.ExecutionException.class, () -> call.get(10, java.util.concurrent.TimeUnit.SECONDS));
            org.junit.jupiter.api.Assertions.assertInstanceOf(io.bcswitch.registry.StoreFailure.Unavailable.class,
                    e.getCause());
        }
    }
}
