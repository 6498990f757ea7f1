package io.bcswitch.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Pulsar's internals are used from the adapter package only: no other package of the plugin ({@code io.bcswitch.*})
 * imports anything of Pulsar (its metadata store included), so a Pulsar release that changes them changes the
 * adapter only. (The few shims that must live in Pulsar's and BookKeeper's own packages, for their package-private
 * types, belong to the adapter layer and are not scanned.)
 */
class AdapterBoundaryTest {
    @Test
    void onlyTheAdapterImportsPulsar() throws IOException {
        Path root = Path.of("src/main/java");
        List<String> outside = new ArrayList<>();
        int files = 0;
        try (Stream<Path> all = Files.walk(root)) {
            for (Path f : all.filter(p -> p.toString().endsWith(".java")).toList()) {
                files++;
                String rel = root.relativize(f).toString().replace('\\', '/');
                if (!rel.startsWith("io/bcswitch/") || rel.startsWith("io/bcswitch/adapter/")) {
                    continue;
                }
                for (String line : Files.readAllLines(f)) {
                    if (line.matches("import (static )?org\\.apache\\.pulsar\\..*")
                            || line.contains(" org.apache.pulsar.metadata.")) {
                        outside.add(root.relativize(f) + ": " + line.trim());
                    }
                }
            }
        }
        assertTrue(files > 100, "the scan found the sources: " + files);
        assertEquals(List.of(), outside);
    }
}
