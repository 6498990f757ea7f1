package io.bcswitch.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Kubernetes files (deploy/) say what the distribution's broker.conf snippet says, for the Pulsar release the
 * plugin is built against: a key renamed in one place cannot leave the other behind.
 */
class DeployFilesTest {
    private static final Path ROOT = Path.of("..");

    @Test
    void theHelmValuesSetTheSnippetsKeysAndTheImageIsThePinnedRelease() throws Exception {
        Properties snippet = new Properties();
        snippet.load(new StringReader(Files.readString(ROOT.resolve("bcs-dist/src/conf/broker.conf.snippet"))));
        String values = Files.readString(ROOT.resolve("deploy/helm/values-bookie-cluster-switch.yaml"));
        Map<String, String> prefixed = new TreeMap<>();
        Matcher m = Pattern.compile("(?m)^\\s+PULSAR_PREFIX_(\\S+):\\s*(\\S+)").matcher(values);
        while (m.find()) {
            prefixed.put(m.group(1), m.group(2));
        }
        assertEquals(new TreeMap<>(snippet).keySet(), prefixed.keySet(), "the values set every key of the snippet");
        for (String key : prefixed.keySet()) {
            if (key.endsWith("ClassName") || key.startsWith("bookieClusterSwitch.") || key.equals("additionalServlets")) {
                assertEquals(snippet.getProperty(key), prefixed.get(key), key);
            }
        }
        String dockerfile = Files.readString(ROOT.resolve("deploy/docker/Dockerfile"));
        assertTrue(dockerfile.contains(prefixed.get("additionalServletDirectory") + "/"),
                "the image puts the servlet NAR where the values say");
        String pom = Files.readString(ROOT.resolve("pom.xml"));
        Matcher v = Pattern.compile("<pulsar.version>([^<]+)</pulsar.version>").matcher(pom);
        assertTrue(v.find());
        assertTrue(dockerfile.contains("apachepulsar/pulsar:" + v.group(1)), "the image is the release built against");
        assertTrue(values.contains("defaultPulsarImageTag: \"" + v.group(1) + "\""), "the chart runs that release");
    }
}
