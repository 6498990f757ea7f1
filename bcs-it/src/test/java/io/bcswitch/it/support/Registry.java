package io.bcswitch.it.support;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/** Byte-for-byte snapshots of metadata-store subtrees, read straight from ZooKeeper. */
public final class Registry {
    private Registry() {
    }

    /** The plugin's registry (default path) and the managed-ledger metadata: what a refused request must not change. */
    public static Map<String, String> registryAndManagedLedgers(io.bcswitch.testkit.TestCluster cluster)
            throws Exception {
        awaitStartupWrites(cluster.zkConnectString());
        return snapshot(cluster.zkConnectString(), "/admin/bookie-clusters", "/managed-ledgers");
    }

    /**
     * Waits until the writes a broker's plugin makes on its own after start-up have landed: the active cluster's
     * id watermark and, when the bookie cluster has an instance id, that id in its record. A before/after
     * comparison that starts earlier sees them as a change the refused request made.
     */
    public static void awaitStartupWrites(String zkConnect) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(zkConnect, 30_000, e -> connected.countDown());
        try {
            connected.await(30, TimeUnit.SECONDS);
            String missing;
            while ((missing = startupWriteMissing(zk)) != null) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("the brokers' start-up writes did not land in 60 s: " + missing);
                }
                Thread.sleep(100);
            }
        } finally {
            zk.close();
        }
    }

    private static String startupWriteMissing(ZooKeeper zk) throws Exception {
        String root = "/admin/bookie-clusters";
        com.fasterxml.jackson.databind.ObjectMapper mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        List<String> names;
        try {
            names = zk.getChildren(root + "/clusters", false);
        } catch (KeeperException.NoNodeException e) {
            return null; // no registry yet: nothing a broker writes on its own
        }
        for (String name : names) {
            com.fasterxml.jackson.databind.JsonNode c;
            try {
                c = mapper.readTree(zk.getData(root + "/clusters/" + name, false, null));
            } catch (KeeperException.NoNodeException e) {
                continue;
            }
            if (!"ACTIVE".equals(c.path("status").asText())) {
                continue;
            }
            if (zk.exists(root + "/id-watermarks/" + name, false) == null) {
                return "no id watermark for active cluster " + name;
            }
            String uri = c.path("metadataServiceUri").asText();
            String ledgersRoot = uri.substring(uri.indexOf('/', uri.indexOf("://") + 3));
            if (c.path("instanceId").isMissingNode() && zk.exists(ledgersRoot + "/INSTANCEID", false) != null) {
                return "no instance id recorded for active cluster " + name;
            }
        }
        return null;
    }

    /** Writes {@code json} at {@code path} straight into ZooKeeper (created if missing), as a broker would. */
    public static void put(String zkConnect, String path, String json) throws Exception {
        put(zkConnect, path, json.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** Writes {@code data} at {@code path} straight into ZooKeeper (created if missing). */
    public static void put(String zkConnect, String path, byte[] data) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(zkConnect, 30_000, e -> connected.countDown());
        try {
            connected.await(30, TimeUnit.SECONDS);
            if (zk.exists(path, false) == null) {
                zk.create(path, data, org.apache.zookeeper.ZooDefs.Ids.OPEN_ACL_UNSAFE,
                        org.apache.zookeeper.CreateMode.PERSISTENT);
            } else {
                zk.setData(path, data, -1);
            }
        } finally {
            zk.close();
        }
    }

    /** The data of the node at {@code path}, read straight from ZooKeeper. */
    public static byte[] get(String zkConnect, String path) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(zkConnect, 30_000, e -> connected.countDown());
        try {
            connected.await(30, TimeUnit.SECONDS);
            return zk.getData(path, false, null);
        } finally {
            zk.close();
        }
    }

    /** Every node under each of {@code roots}: path to "version:data-as-hex". */
    public static Map<String, String> snapshot(String zkConnect, String... roots) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(zkConnect, 30_000, e -> connected.countDown());
        try {
            connected.await(30, TimeUnit.SECONDS);
            Map<String, String> out = new TreeMap<>();
            for (String root : roots) {
                walk(zk, root, out);
            }
            return out;
        } finally {
            zk.close();
        }
    }

    /** The JSON value of each child of {@code parent}, by child name (empty when there is no such node). */
    public static Map<String, com.fasterxml.jackson.databind.JsonNode> jsonChildren(String zkConnect, String parent)
            throws Exception {
        com.fasterxml.jackson.databind.ObjectMapper mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        Map<String, com.fasterxml.jackson.databind.JsonNode> out = new TreeMap<>();
        for (Map.Entry<String, String> e : snapshot(zkConnect, parent).entrySet()) {
            if (e.getKey().startsWith(parent + "/") && e.getKey().indexOf('/', parent.length() + 1) < 0) {
                String hex = e.getValue().substring(e.getValue().lastIndexOf(':') + 1);
                byte[] data = java.util.HexFormat.of().parseHex(hex);
                out.put(e.getKey().substring(parent.length() + 1), mapper.readTree(data));
            }
        }
        return out;
    }

    /**
     * Every relocation in the registry (default path), by ledger id, read straight from ZooKeeper: the per-ledger
     * nodes in the shard directories and any an earlier version kept directly under the table.
     */
    public static Map<Long, com.fasterxml.jackson.databind.JsonNode> relocations(String zkConnect) throws Exception {
        return jsonLeaves(zkConnect, "/admin/bookie-clusters/relocations");
    }

    /** The ids of the copies the migration after switch {@code epoch} recorded (its chunks, in order). */
    public static List<Long> copies(String zkConnect, long epoch) throws Exception {
        List<Long> ids = new java.util.ArrayList<>();
        jsonLeaves(zkConnect, "/admin/bookie-clusters/copies/" + epoch).values()
                .forEach(chunk -> chunk.get("ids").forEach(id -> ids.add(id.asLong())));
        return ids;
    }

    /** JSON of every node with data under {@code root} whose name is a number, by that number. */
    private static Map<Long, com.fasterxml.jackson.databind.JsonNode> jsonLeaves(String zkConnect, String root)
            throws Exception {
        com.fasterxml.jackson.databind.ObjectMapper mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        Map<Long, com.fasterxml.jackson.databind.JsonNode> out = new TreeMap<>();
        for (Map.Entry<String, String> e : snapshot(zkConnect, root).entrySet()) {
            String last = e.getKey().substring(e.getKey().lastIndexOf('/') + 1);
            String hex = e.getValue().substring(e.getValue().lastIndexOf(':') + 1);
            if (last.matches("\\d+") && !hex.isEmpty()) {
                out.put(Long.parseLong(last), mapper.readTree(java.util.HexFormat.of().parseHex(hex)));
            }
        }
        return out;
    }

    private static void walk(ZooKeeper zk, String path, Map<String, String> out) throws Exception {
        Stat stat = new Stat();
        byte[] data;
        List<String> children;
        try {
            data = zk.getData(path, false, stat);
            children = zk.getChildren(path, false);
        } catch (KeeperException.NoNodeException e) {
            return;
        }
        StringBuilder hex = new StringBuilder();
        if (data != null) {
            for (byte b : data) {
                hex.append(String.format("%02x", b));
            }
        }
        out.put(path, stat.getVersion() + ":" + stat.getCversion() + ":" + hex);
        for (String c : children) {
            walk(zk, (path.equals("/") ? "" : path) + "/" + c, out);
        }
    }
}
