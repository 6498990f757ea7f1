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
}
