package io.bcswitch.precheck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ClusterLocationTest {

    private static void assertRejected(String uri, String messagePart) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ClusterLocation.parse(uri),
                String.valueOf(uri));
        assertTrue(e.getMessage().contains(messagePart), "'" + uri + "' -> " + e.getMessage());
    }

    private static boolean same(String a, String b) {
        return ClusterLocation.parse(a).sameClusterAs(ClusterLocation.parse(b));
    }

    @Test
    void zkHierarchical() {
        String uri = "zk+hierarchical://zk1:2181/ledgers";
        assertEquals(new ClusterLocation(uri, "zk:zk1:2181", "/ledgers", "zk1:2181", "/ledgers"),
                ClusterLocation.parse(uri));
    }

    @Test
    void plainZkWithDeepRootAndTrailingSlashes() {
        ClusterLocation l = ClusterLocation.parse("zk://zk1:2181/pulsar/bk/ledgers///");
        assertEquals("zk:zk1:2181", l.storeUrl());
        assertEquals("/pulsar/bk/ledgers", l.ledgersRoot());
        assertEquals("/pulsar/bk/ledgers", l.absoluteRoot());
        assertEquals("/ledgers", ClusterLocation.parse("zk+longhierarchical://h:1/ledgers/").ledgersRoot());
        assertEquals("/ledgers", ClusterLocation.parse("ZK+Hierarchical://h:1/ledgers").ledgersRoot());
    }

    @Test
    void multipleServers() {
        ClusterLocation semi = ClusterLocation.parse("zk+hierarchical://zk3:2183;zk1:2181;zk2:2182/ledgers");
        assertEquals("zk:zk3:2183,zk1:2181,zk2:2182", semi.storeUrl());
        assertEquals("zk1:2181,zk2:2182,zk3:2183", semi.servers());
        ClusterLocation comma = ClusterLocation.parse("zk://zk2:2182,zk1:2181/ledgers");
        assertEquals("zk:zk2:2182,zk1:2181", comma.storeUrl());
        assertEquals("zk1:2181,zk2:2182", comma.servers());
        ClusterLocation ms = ClusterLocation.parse("metadata-store:zk:zk2:2182;zk1:2181/chroot");
        assertEquals("zk:zk2:2182,zk1:2181/chroot", ms.storeUrl());
        assertEquals("zk1:2181,zk2:2182", ms.servers());
    }

    @Test
    void metadataStoreForms() {
        ClusterLocation chrooted = ClusterLocation.parse("metadata-store:zk:zk1:2181/bk-west");
        assertEquals(new ClusterLocation("metadata-store:zk:zk1:2181/bk-west", "zk:zk1:2181/bk-west", "/ledgers",
                "zk1:2181", "/bk-west/ledgers"), chrooted);

        ClusterLocation bare = ClusterLocation.parse("metadata-store:zk:zk1:2181");
        assertEquals("zk:zk1:2181", bare.storeUrl());
        assertEquals("/ledgers", bare.ledgersRoot());
        assertEquals("/ledgers", bare.absoluteRoot());

        ClusterLocation slash = ClusterLocation.parse("metadata-store:zk:zk1:2181/bk-west//");
        assertEquals("zk:zk1:2181/bk-west", slash.storeUrl());
        assertEquals("/bk-west/ledgers", slash.absoluteRoot());
        assertEquals("/ledgers", ClusterLocation.parse("metadata-store:zk:zk1:2181/").absoluteRoot());

        ClusterLocation query = ClusterLocation.parse("metadata-store:zk:zk1:2181/bk?sessionTimeoutMillis=5000");
        assertEquals("zk:zk1:2181/bk", query.storeUrl());
        assertEquals("/bk/ledgers", query.absoluteRoot());
    }

    @Test
    void theBrokersImplicitDefaultFormIsAChrootOnItsOwn() {
        // Pulsar's implicit default "metadata-store:<store>/ledgers" means /ledgers of the broker's store only
        // inside the broker; on its own the path is a chroot. The plugin registers the broker's cluster in the
        // stand-alone form (no path), which means the store's /ledgers everywhere.
        assertEquals("/ledgers/ledgers", ClusterLocation.parse("metadata-store:zk:zk1:2181/ledgers").absoluteRoot());
        assertEquals("/ledgers", ClusterLocation.parse("metadata-store:zk:zk1:2181").absoluteRoot());
    }

    @Test
    void sameClusterAs() {
        assertTrue(same("zk://localhost:2181/ledgers", "zk+hierarchical://127.0.0.1:2181/ledgers"));
        assertTrue(same("zk://LOCALHOST:2181/ledgers", "zk://127.0.0.1:2181/ledgers/"));
        assertTrue(same("zk://a:1;b:2/ledgers", "zk+hierarchical://b:2,a:1/ledgers"));
        assertTrue(same("zk://ZK1:2181/ledgers", "zk://zk1:2181/ledgers"));
        // the same znodes reached through both drivers
        assertTrue(same("metadata-store:zk:zk1:2181/west", "zk+hierarchical://zk1:2181/west/ledgers"));
        assertTrue(same("metadata-store:zk:zk1:2181", "zk://zk1:2181/ledgers"));

        assertFalse(same("zk://zk1:2181/ledgers", "zk://zk1:2181/ledgers2"));
        assertFalse(same("zk://zk1:2181/ledgers", "zk://zk1:2182/ledgers"));
        assertFalse(same("zk://zk1:2181/ledgers", "zk://zk2:2181/ledgers"));
        assertFalse(same("metadata-store:zk:zk1:2181/west", "metadata-store:zk:zk1:2181/east"));
        assertFalse(same("zk://localhost:2181/a", "zk://127.0.0.2:2181/a"));
    }

    @Test
    void rejections() {
        assertRejected(null, "empty");
        assertRejected("", "empty");
        assertRejected("   ", "empty");
        assertRejected("zk1:2181/ledgers", "no scheme");
        assertRejected("http://zk1:2181/ledgers", "unsupported metadataServiceUri scheme 'http'");
        assertRejected("etcd://zk1:2379/ledgers", "unsupported");
        assertRejected("metadata-store:etcd:http://h:2379", "only ZooKeeper-backed");
        assertRejected("metadata-store:oxia://oxia:6648/bookkeeper", "never run against an Oxia server");
        assertRejected("metadata-store:zk:", "names no ZooKeeper server");
        assertRejected("metadata-store:zk:/chroot", "names no ZooKeeper server");
        assertRejected("zk://zk1:2181", "no ledgers root path");
        assertRejected("zk://zk1:2181/", "no ledgers root path");
        assertRejected("zk:///ledgers", "names no ZooKeeper server");
        assertRejected("zk://zk1/ledgers", "is not host:port");
        assertRejected("zk://:2181/ledgers", "is not host:port");
        assertRejected("zk://zk1:/ledgers", "is not host:port");
        assertRejected("zk://;zk1:2181/ledgers", "is not host:port");
        assertRejected("zk://zk1:0/ledgers", "invalid port");
        assertRejected("zk://zk1:65536/ledgers", "invalid port");
        assertRejected("zk://zk1:21x1/ledgers", "invalid port");
        assertRejected("zk://zk1:2181,zk2:-1/ledgers", "invalid port");
        assertRejected("zk://zk!1:2181/ledgers", "invalid host");
        assertRejected("metadata-store:zk:zk1:99999", "invalid port");
        assertRejected("zk://zk1:2181/ledgers/../other", "invalid path");
        assertRejected("zk://zk1:2181/../ledgers", "invalid path");
        assertRejected("zk://zk1:2181/./ledgers", "invalid path");
        assertRejected("zk://zk1:2181/a//b", "invalid path");
        assertRejected("zk://zk1:2181/led gers", "whitespace or non-ASCII");
        assertRejected("zk://zk1:2181/ledgers\n", "whitespace or non-ASCII");
        assertRejected("zk://zk1:2181/ledgers\t", "whitespace or non-ASCII");
        assertRejected("zk://zk1:2181/lédgers", "whitespace or non-ASCII");
        assertRejected("zk://zk1:2181/ledgers\u0000", "whitespace or non-ASCII");
        assertRejected("zk://zk1:2181/" + "a".repeat(1024), "longer than 1024");
    }

    @Test
    void ipv6HostsMustBeBracketedWhole() {
        assertEquals("zk:[::1]:2181", ClusterLocation.parse("zk+hierarchical://[::1]:2181/ledgers").storeUrl());
        assertRejected("zk+hierarchical://[::1/ledgers", "invalid host");
        assertRejected("zk+hierarchical://::1]:2181/ledgers", "invalid host");
        assertRejected("zk+hierarchical://h[x]:2181/ledgers", "invalid host");
    }

    @Test
    void lengthLimitIsInclusive() {
        String prefix = "zk://zk1:2181/";
        String uri = prefix + "a".repeat(1024 - prefix.length());
        assertEquals(1024, uri.length());
        assertEquals(1024 - prefix.length() + 1, ClusterLocation.parse(uri).ledgersRoot().length());
    }

    @Test
    void onlySlashesIsNoLedgersRoot() {
        assertRejected("zk://zk1:2181//", "no ledgers root path");
        assertRejected("zk://zk1:2181///", "no ledgers root path");
    }

    @Test
    void metadataStoreChrootIsValidated() {
        assertRejected("metadata-store:zk:zk1:2181/a/../b", "invalid");
        assertRejected("metadata-store:zk:zk1:2181/a//b", "invalid");
    }
}
