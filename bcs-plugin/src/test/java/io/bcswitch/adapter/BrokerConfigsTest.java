package io.bcswitch.adapter;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.bcswitch.precheck.ClusterLocation;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.junit.jupiter.api.Test;

class BrokerConfigsTest {

    private static ServiceConfiguration conf(String metadataStoreUrl, String bookkeeperUri) {
        ServiceConfiguration c = new ServiceConfiguration();
        c.setMetadataStoreUrl(metadataStoreUrl);
        c.setBookkeeperMetadataServiceUri(bookkeeperUri);
        return c;
    }

    @Test
    void explicitUriIsKept() {
        assertEquals("zk+hierarchical://zk1:2181/bk/ledgers",
                BrokerConfigs.standaloneBookieUri(conf("zk:zk1:2181", "zk+hierarchical://zk1:2181/bk/ledgers")));
    }

    @Test
    void implicitDefaultBecomesAStandaloneUriWithTheSameLedgersRoot() {
        // the broker's implicit default keeps the ledgers at <store chroot>/ledgers
        String plain = BrokerConfigs.standaloneBookieUri(conf("zk:zk1:2181", null));
        assertEquals("metadata-store:zk:zk1:2181", plain);
        assertEquals("/ledgers", ClusterLocation.parse(plain).absoluteRoot());

        String chrooted = BrokerConfigs.standaloneBookieUri(conf("zk:zk1:2181,zk2:2181/pulsar", null));
        assertEquals("metadata-store:zk:zk1:2181,zk2:2181/pulsar", chrooted);
        assertEquals("/pulsar/ledgers", ClusterLocation.parse(chrooted).absoluteRoot());

        assertEquals("metadata-store:zk:127.0.0.1:2181",
                BrokerConfigs.standaloneBookieUri(conf("127.0.0.1:2181", null)));
        assertEquals("metadata-store:zk:localhost:2181",
                BrokerConfigs.standaloneBookieUri(conf("localhost:2181", null)));
    }

    @Test
    void copyChangesOnlyTheMetadataServiceUri() {
        ServiceConfiguration c = conf("zk:zk1:2181", "zk+hierarchical://zk1:2181/a/ledgers");
        c.setBookkeeperClientTimeoutInSeconds(77);
        ServiceConfiguration copy = BrokerConfigs.withMetadataServiceUri(c, "zk+hierarchical://zk9:2181/b/ledgers");
        assertEquals("zk+hierarchical://zk9:2181/b/ledgers", copy.getBookkeeperMetadataStoreUrl());
        assertEquals(77, copy.getBookkeeperClientTimeoutInSeconds());
        assertEquals("zk+hierarchical://zk1:2181/a/ledgers", c.getBookkeeperMetadataStoreUrl());
    }
}
