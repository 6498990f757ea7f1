package io.bcswitch.adapter;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.bcswitch.concurrent.Failures;
import io.bcswitch.registry.MetadataPort;
import io.bcswitch.registry.MetadataPortContract;
import io.bcswitch.registry.StoreFailure;
import io.bcswitch.testkit.TestEtcd;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The metadata store contract the registry relies on, over Pulsar's etcd store and a real etcd server (Debian's
 * {@code etcd-server}; skipped with a message where it is not installed), and how the adapter classifies an etcd
 * that does not answer.
 */
class PulsarMetadataPortOnEtcdTest extends MetadataPortContract {
    private static TestEtcd etcd;

    private static Path binary() {
        Assumptions.assumeTrue(TestEtcd.pulsarHasEtcdStore(), "this Pulsar line has no etcd metadata store");
        Optional<Path> bin = TestEtcd.binary();
        Assumptions.assumeTrue(bin.isPresent(), "etcd is not installed (Debian's etcd-server package; .ci/run "
                + "installs it): the store contract on etcd is skipped");
        return bin.get();
    }

    @BeforeAll
    static void startEtcd() throws Exception {
        etcd = TestEtcd.start(binary());
    }

    @AfterAll
    static void stopEtcd() throws Exception {
        if (etcd != null) {
            etcd.close();
        }
    }

    /** One server for every test, each starting from an empty key space (etcd has no chroot). */
    @Override
    protected MetadataPort newPort() throws Exception {
        etcd.deleteAll();
        return PulsarMetadataPort.open(etcd.metadataStoreUrl(), 30_000, "contract");
    }

    /**
     * An etcd that is gone is "unavailable" (the registry retries and the switch's safety waits, as for a ZooKeeper
     * that lost its connection), not a failure of the request (which would be reported to the operator as one).
     */
    @Test
    void anEtcdThatIsGoneIsUnavailable() throws Exception {
        TestEtcd own = TestEtcd.start(binary());
        // a port opened by the plugin itself is bounded by its session timeout: 5 s here
        try (PulsarMetadataPort p = PulsarMetadataPort.open(own.metadataStoreUrl(), 5_000, "contract-gone")) {
            p.put("/gone/a", new byte[] {1}, Optional.empty(), false).get(30, TimeUnit.SECONDS);
            own.close();
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> p.get("/gone/b").get(30, TimeUnit.SECONDS));
            assertInstanceOf(StoreFailure.Unavailable.class, Failures.unwrap(e), () -> "got " + e.getCause());
        } finally {
            own.close();
        }
    }
}
