package io.bcswitch.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.config.ConfigKey;
import io.bcswitch.it.support.Distribution;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The archive {@code mvn package} produces holds what an operator installs next to Pulsar, and its
 * configuration snippets name only real settings, each documented. (The pulsar-admin test installs the
 * CLI from this archive; the broker tests load the same servlet NAR and plugin jar from the build.)
 */
class DistributionTest {
    @Test
    void archiveHoldsPluginNarsClientSnippetsAndDocs(@TempDir Path tmp) throws Exception {
        Path top = Distribution.unpack(tmp);
        Set<String> files;
        try (Stream<Path> all = Files.walk(top)) {
            files = all.filter(Files::isRegularFile).map(p -> top.relativize(p).toString()).collect(Collectors.toSet());
        }
        for (String prefix : List.of("lib/bcs-plugin-", "servlets/bcs-servlet-", "cliextensions/bcs-cli-",
                "java-client/bcs-admin-client-")) {
            assertEquals(1, files.stream().filter(f -> f.startsWith(prefix)).count(), prefix + " in " + files);
        }
        for (String f : List.of("README.md", "INSTALL.md", "conf/broker.conf.snippet", "conf/client.conf.snippet",
                "docs/operations.md", "docs/configuration.md", "docs/ledger-kinds.md", "prometheus/alerts.yaml",
                "prometheus/alerts.test.yaml", "grafana/bookie-cluster-switch.json", "docs/kubernetes.md",
                "deploy/docker/Dockerfile", "deploy/helm/values-bookie-cluster-switch.yaml")) {
            assertTrue(files.contains(f), f + " in " + files);
        }
        // the NARs declare the names the snippets use
        try (JarFile servlet = new JarFile(only(top.resolve("servlets")).toFile());
             JarFile cli = new JarFile(only(top.resolve("cliextensions")).toFile())) {
            assertTrue(text(servlet, "META-INF/services/additional_servlet.yml").contains("name: bookie-clusters"));
            assertTrue(text(cli, "META-INF/services/command_factory.yml").contains("name: bookie-clusters"));
        }
        // the plugin jar carries the entry classes broker.conf names
        Properties broker = load(top.resolve("conf/broker.conf.snippet"));
        try (JarFile plugin = new JarFile(only(top.resolve("lib")).toFile())) {
            for (String key : List.of("managedLedgerStorageClassName", "schemaRegistryStorageClassName")) {
                String cls = broker.getProperty(key);
                assertTrue(plugin.getEntry(cls.replace('.', '/') + ".class") != null, key + "=" + cls);
            }
        }
        assertEquals("bookie-clusters", broker.getProperty("additionalServlets"));
        assertEquals("bookie-clusters", load(top.resolve("conf/client.conf.snippet"))
                .getProperty("customCommandFactories"));
        // every plugin key in the snippet (set or commented) exists and is documented
        String docs = Files.readString(top.resolve("docs/configuration.md"));
        Set<String> known = new HashSet<>();
        ConfigKey.all().forEach(k -> known.add(k.fullName()));
        for (String line : Files.readAllLines(top.resolve("conf/broker.conf.snippet"))) {
            String l = line.replaceFirst("^#", "");
            if (l.startsWith(io.bcswitch.config.SwitchConfig.PREFIX)) {
                String key = l.substring(0, l.indexOf('='));
                assertTrue(known.contains(key), key + " is a plugin setting");
                assertTrue(docs.contains("`" + key + "`"), key + " is documented in configuration.md");
            }
        }
        for (ConfigKey k : ConfigKey.all()) {
            assertTrue(docs.contains("`" + k.fullName() + "`"), k.fullName() + " documented");
            if (!k.defaultValue().isEmpty()) {
                assertTrue(docs.contains("| `" + k.fullName() + "` | `" + k.defaultValue() + "` |"),
                        k.fullName() + " documented with its default " + k.defaultValue());
            }
        }
    }

    private static Path only(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            List<Path> l = s.toList();
            assertEquals(1, l.size(), dir + ": " + l);
            return l.get(0);
        }
    }

    private static String text(JarFile jar, String entry) throws Exception {
        try (InputStream in = jar.getInputStream(jar.getEntry(entry))) {
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    private static Properties load(Path p) throws Exception {
        Properties props = new Properties();
        try (InputStream in = Files.newInputStream(p)) {
            props.load(in);
        }
        return props;
    }
}
