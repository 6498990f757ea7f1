package io.bcswitch.precheck;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * Where a bookie cluster keeps its metadata, parsed from its BookKeeper metadata service URI.
 *
 * <p>Two URI families are understood:
 * <ul>
 *   <li>{@code zk[+manager]://host:port[;host:port]/ledgers/root}: BookKeeper's ZooKeeper driver; the
 *       URI path is the ledgers root;</li>
 *   <li>{@code metadata-store:zk:host:port[,host:port][/chroot]}: Pulsar's driver. It opens a store
 *       chrooted at {@code /chroot} and keeps the cluster under {@code /ledgers} inside it. (The broker's
 *       implicit default {@code metadata-store:<metadataStoreUrl>/ledgers}, with
 *       {@code bookkeeperMetadataServiceUri} unset, means {@code /ledgers} of the broker's own store only
 *       because the broker shares its store with its BookKeeper client; the plugin registers the broker's
 *       cluster in the stand-alone form {@code metadata-store:<metadataStoreUrl>}, which means the same
 *       everywhere: see {@code BrokerConfigs.standaloneBookieUri}.)</li>
 * </ul>
 *
 * @param uri              the URI as registered
 * @param storeUrl         Pulsar metadata-store URL to open ({@code zk:servers[/chroot]})
 * @param ledgersRoot      the ledgers root path inside that store
 * @param servers          sorted, comma-separated ZooKeeper servers (for duplicate detection)
 * @param absoluteRoot     the ledgers root as an absolute ZooKeeper path (chroot included)
 */
public record ClusterLocation(String uri, String storeUrl, String ledgersRoot, String servers,
                              String absoluteRoot) {

    private static final String METADATA_STORE = "metadata-store:";

    /** Parses {@code uri}; throws {@link IllegalArgumentException} with a reason an operator can act on. */
    public static ClusterLocation parse(String uri) {
        if (uri == null || uri.isBlank()) {
            throw new IllegalArgumentException("metadataServiceUri is empty");
        }
        if (uri.length() > 1024) {
            throw new IllegalArgumentException("metadataServiceUri is longer than 1024 characters");
        }
        for (char c : uri.toCharArray()) {
            if (c <= ' ' || c > '~') {
                throw new IllegalArgumentException("metadataServiceUri contains whitespace or non-ASCII characters");
            }
        }
        String lower = uri.toLowerCase(Locale.ROOT);
        if (lower.startsWith(METADATA_STORE)) {
            String storeUrl = uri.substring(METADATA_STORE.length());
            int q = storeUrl.indexOf('?');
            if (q >= 0) {
                storeUrl = storeUrl.substring(0, q);
            }
            if (storeUrl.toLowerCase(Locale.ROOT).startsWith("oxia:")) {
                throw new IllegalArgumentException("bookie clusters whose metadata is on Oxia are not supported: the "
                        + "plugin has never run against an Oxia server (none can be run where it is tested), so a "
                        + "switch to or from such a cluster is unproven; only ZooKeeper-backed metadata-store URIs "
                        + "(metadata-store:zk:...) are supported: " + uri);
            }
            if (!storeUrl.startsWith("zk:")) {
                throw new IllegalArgumentException("only ZooKeeper-backed metadata-store URIs (metadata-store:zk:...) "
                        + "are supported: a switch reads and advances a bookie cluster's ledger-id generator in "
                        + "ZooKeeper's layout: " + uri);
            }
            String rest = storeUrl.substring(3);
            int slash = rest.indexOf('/');
            String servers = slash < 0 ? rest : rest.substring(0, slash);
            String chroot = slash < 0 ? "" : stripTrailingSlash(rest.substring(slash));
            checkServers(servers, uri);
            checkPath(chroot, uri);
            return new ClusterLocation(uri, "zk:" + servers.replace(';', ',') + chroot, "/ledgers",
                    normalizeServers(servers), chroot + "/ledgers");
        }
        int sep = uri.indexOf("://");
        if (sep < 0) {
            throw new IllegalArgumentException("metadataServiceUri has no scheme (expected zk+hierarchical://... "
                    + "or metadata-store:zk:...): " + uri);
        }
        String scheme = lower.substring(0, sep);
        if (!scheme.equals("zk") && !scheme.startsWith("zk+")) {
            throw new IllegalArgumentException("unsupported metadataServiceUri scheme '" + scheme
                    + "' (expected zk, zk+hierarchical, zk+longhierarchical, zk+null or metadata-store)");
        }
        String rest = uri.substring(sep + 3);
        int slash = rest.indexOf('/');
        if (slash < 0 || slash == rest.length() - 1) {
            throw new IllegalArgumentException("metadataServiceUri has no ledgers root path: " + uri);
        }
        String servers = rest.substring(0, slash);
        String root = stripTrailingSlash(rest.substring(slash));
        checkServers(servers, uri);
        if (root.isEmpty()) {
            throw new IllegalArgumentException("metadataServiceUri has no ledgers root path: " + uri);
        }
        checkPath(root, uri);
        return new ClusterLocation(uri, "zk:" + servers.replace(';', ','), root, normalizeServers(servers), root);
    }

    /** Two locations name the same cluster when they share ZooKeeper servers and ledgers root. */
    public boolean sameClusterAs(ClusterLocation other) {
        return absoluteRoot.equals(other.absoluteRoot) && servers.equals(other.servers);
    }

    private static void checkServers(String servers, String uri) {
        if (servers.isEmpty()) {
            throw new IllegalArgumentException("metadataServiceUri names no ZooKeeper server: " + uri);
        }
        for (String s : servers.split("[;,]", -1)) {
            int colon = s.lastIndexOf(':');
            if (s.isEmpty() || colon <= 0 || colon == s.length() - 1) {
                throw new IllegalArgumentException("metadataServiceUri server '" + s + "' is not host:port");
            }
            try {
                int port = Integer.parseInt(s.substring(colon + 1));
                if (port < 1 || port > 65535) {
                    throw new NumberFormatException();
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("metadataServiceUri server '" + s + "' has an invalid port");
            }
            // a host name or IPv4 address, or an IPv6 address in brackets
            String host = s.substring(0, colon);
            if (!host.matches("[A-Za-z0-9.\\-_]+") && !host.matches("\\[[0-9A-Fa-f:.]+\\]")) {
                throw new IllegalArgumentException("metadataServiceUri server '" + s + "' has an invalid host");
            }
        }
    }

    private static void checkPath(String path, String uri) {
        if (path.isEmpty()) {
            return;
        }
        for (String seg : path.substring(1).split("/", -1)) {
            if (seg.isEmpty() || seg.equals(".") || seg.equals("..")) {
                throw new IllegalArgumentException("metadataServiceUri has an invalid path '" + path
                        + "' (empty, '.' or '..' segment): " + uri);
            }
        }
    }

    private static String normalizeServers(String servers) {
        return Arrays.stream(servers.split("[;,]")).map(s -> s.toLowerCase(Locale.ROOT))
                .map(s -> s.startsWith("localhost:") ? "127.0.0.1" + s.substring("localhost".length()) : s)
                .sorted().collect(Collectors.joining(","));
    }

    private static String stripTrailingSlash(String p) {
        String r = p;
        while (r.length() > 1 && r.endsWith("/")) {
            r = r.substring(0, r.length() - 1);
        }
        return r.equals("/") ? "" : r;
    }
}
