package io.bcswitch.testkit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/** Where the build output of a module of this checkout is, for tests that load NARs or tools from it. */
public final class Checkout {
    private Checkout() {
    }

    /**
     * {@code <checkout>/<module>/target}, found by walking up from the working directory (a test runs in its
     * own module's directory), else {@code ../<module>/target}.
     */
    public static Path moduleTarget(String module) {
        Path start = Paths.get(System.getProperty("user.dir")).toAbsolutePath().normalize();
        for (Path dir = start; dir != null; dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve(module))) {
                return dir.resolve(module).resolve("target");
            }
        }
        return start.resolve("../" + module + "/target").normalize();
    }
}
