package io.bcswitch.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * docs/configuration.md's key table is {@link ConfigKey#markdownTable()}: this fails when the committed page
 * differs. To write the page from the keys: {@code mvn -pl bcs-plugin test -Dtest=ConfigurationDocTest
 * -Dbcs.docs.write=true}.
 */
class ConfigurationDocTest {
    static final String START = "<!-- config-keys: rendered from io.bcswitch.config.ConfigKey; do not edit by hand -->\n";
    static final String END = "<!-- config-keys: end -->\n";

    @Test
    void theCommittedKeyTableIsTheOneTheKeysRender() throws Exception {
        Path page = Path.of("..", "docs", "configuration.md");
        String text = Files.readString(page, StandardCharsets.UTF_8);
        int start = text.indexOf(START);
        int end = text.indexOf(END);
        assertTrue(start >= 0 && end > start, page + " has no key table between the markers");
        String rendered = text.substring(0, start + START.length()) + ConfigKey.markdownTable()
                + text.substring(end);
        if (Boolean.getBoolean("bcs.docs.write")) {
            Files.writeString(page, rendered, StandardCharsets.UTF_8);
            return;
        }
        assertEquals(rendered, text, page + " differs from the configuration keys; write it with "
                + "-Dtest=ConfigurationDocTest -Dbcs.docs.write=true");
    }
}
