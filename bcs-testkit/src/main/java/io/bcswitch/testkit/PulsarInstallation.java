package io.bcswitch.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * A Pulsar installation on disk, laid out as Pulsar's binary distribution is: {@code lib/} with the runtime jars of
 * the release under test, {@code conf/} with the configuration files, and, once the plugin is installed, what the
 * operator docs say to take from the plugin's distribution archive: its jar in {@code lib/}, the servlet NAR in
 * {@code servlets/}, the CLI NAR in {@code cliextensions/}, and {@code conf/broker.conf.snippet} appended to
 * {@code conf/broker.conf}.
 *
 * <p>Each broker of a {@link ProcessCluster} has an installation of its own (as each host of a real cluster does),
 * so brokers can be installed, upgraded and stripped of the plugin one at a time. The release's jars are linked,
 * not copied: they are the same files for every installation.
 */
public final class PulsarInstallation {

    /** The line the plugin's snippet uses to name the cluster registered at the first start. */
    private static final String CURRENT_CLUSTER_KEY = "bookieClusterSwitch.currentClusterName";
    private static final String SERVLET_DIR_KEY = "additionalServletDirectory";

    private final Path home;
    private Path pluginDistribution;

    private PulsarInstallation(Path home) {
        this.home = home;
    }

    /**
     * Lays out a stock installation in {@code home} (which must not exist yet) from the release's jars in
     * {@code serverLib}.
     */
    static PulsarInstallation layOut(Path home, Path serverLib) throws IOException {
        if (!Files.isDirectory(serverLib)) {
            throw new IllegalStateException("Pulsar server runtime not built: " + serverLib
                    + " (run mvn package from the project root)");
        }
        PulsarInstallation installation = new PulsarInstallation(home);
        Files.createDirectories(home.resolve("lib"));
        Files.createDirectories(home.resolve("conf"));
        Files.createDirectories(home.resolve("data"));
        try (Stream<Path> jars = Files.list(serverLib)) {
            for (Path jar : jars.filter(j -> j.toString().endsWith(".jar")).toList()) {
                Files.createSymbolicLink(home.resolve("lib").resolve(jar.getFileName()), jar.toAbsolutePath());
            }
        }
        // every process logs to its standard output, which the fixture appends to the node's log file
        Files.writeString(home.resolve("conf/log4j2.properties"), String.join("\n",
                "status = warn",
                "appender.console.type = Console",
                "appender.console.name = console",
                "appender.console.layout.type = PatternLayout",
                "appender.console.layout.pattern = %d{HH:mm:ss.SSS} [%t] %-5level %logger{36} - %msg%n",
                "rootLogger.level = info",
                "rootLogger.appenderRef.console.ref = console",
                "logger.zk.name = org.apache.zookeeper",
                "logger.zk.level = warn",
                "logger.bkproto.name = org.apache.bookkeeper.proto",
                "logger.bkproto.level = warn",
                ""));
        return installation;
    }

    public Path home() {
        return home;
    }

    public Path lib() {
        return home.resolve("lib");
    }

    public Path conf(String file) {
        return home.resolve("conf").resolve(file);
    }

    /**
     * Installs the plugin from its unpacked distribution archive {@code distribution} as the operator docs say (a
     * plugin installed before is removed first: an upgrade). {@link #writeBrokerConf} then appends its snippet.
     */
    public synchronized void installPlugin(Path distribution) throws IOException {
        removePlugin();
        try (Stream<Path> jars = Files.list(distribution.resolve("lib"))) {
            for (Path jar : jars.filter(j -> j.toString().endsWith(".jar")).toList()) {
                Files.copy(jar, lib().resolve("plugin-" + jar.getFileName()));
            }
        }
        copyDir(distribution.resolve("servlets"), home.resolve("servlets"));
        copyDir(distribution.resolve("cliextensions"), home.resolve("cliextensions"));
        pluginDistribution = distribution;
    }

    /** Takes the plugin's files out again (the operator docs' removal); {@link #writeBrokerConf} then omits it. */
    public synchronized void removePlugin() throws IOException {
        try (Stream<Path> jars = Files.list(lib())) {
            for (Path jar : jars.filter(j -> j.getFileName().toString().startsWith("plugin-")).toList()) {
                Files.delete(jar);
            }
        }
        TempDirs.deleteRecursively(home.resolve("servlets"));
        TempDirs.deleteRecursively(home.resolve("cliextensions"));
        pluginDistribution = null;
    }

    /**
     * Writes {@code conf/broker.conf}: the stock settings {@code settings} as {@code key=value} lines, then, with
     * the plugin installed, the distribution's {@code conf/broker.conf.snippet} as an operator appends it, with the
     * two values it asks to fill in (the servlet directory of this installation, the name of the cluster the
     * brokers start on); then {@code overrides}, which win over both.
     */
    public synchronized Path writeBrokerConf(Properties settings, String currentClusterName,
                                             Map<String, String> overrides) throws IOException {
        List<String> lines = new ArrayList<>();
        lines.add("### stock settings");
        new TreeMap<>(settings).forEach((k, v) -> lines.add(k + "=" + v));
        if (pluginDistribution != null) {
            lines.add("");
            for (String line : Files.readAllLines(pluginDistribution.resolve("conf/broker.conf.snippet"))) {
                if (line.startsWith(SERVLET_DIR_KEY + "=")) {
                    lines.add(SERVLET_DIR_KEY + "=" + home.resolve("servlets"));
                } else if (line.startsWith(CURRENT_CLUSTER_KEY + "=")) {
                    lines.add(CURRENT_CLUSTER_KEY + "=" + currentClusterName);
                } else {
                    lines.add(line);
                }
            }
        }
        if (!overrides.isEmpty()) {
            // Pulsar's configuration loader keeps the last value of a key: these win over the lines above
            lines.add("");
            lines.add("### this cluster's settings");
            new TreeMap<>(overrides).forEach((k, v) -> lines.add(k + "=" + v));
        }
        Path conf = conf("broker.conf");
        Files.write(conf, lines);
        return conf;
    }

    private static void copyDir(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        if (!Files.isDirectory(from)) {
            return;
        }
        try (Stream<Path> files = Files.list(from)) {
            for (Path f : files.toList()) {
                Files.copy(f, to.resolve(f.getFileName()));
            }
        }
    }

    @Override
    public String toString() {
        return "PulsarInstallation[" + home + (pluginDistribution != null ? ", plugin from " + pluginDistribution
                : ", stock") + "]";
    }
}
