package io.bcswitch.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RegistryPathsTest {

    @Test
    void pathsUnderTheRoot() {
        RegistryPaths p = new RegistryPaths("/admin/bookie-clusters");
        assertEquals("/admin/bookie-clusters", p.root());
        assertEquals("/admin/bookie-clusters/clusters", p.clusters());
        assertEquals("/admin/bookie-clusters/clusters/east", p.cluster("east"));
        assertEquals("/admin/bookie-clusters/ranges", p.ranges());
        assertEquals("/admin/bookie-clusters/bootstrap", p.bootstrap());
        assertEquals("/admin/bookie-clusters/switch-target", p.switchTarget());
        assertEquals("/admin/bookie-clusters/brokers", p.brokers());
        assertEquals("/admin/bookie-clusters/brokers/broker-1:8080", p.broker("broker-1:8080"));
        assertEquals("/x/clusters", new RegistryPaths("/x").clusters());
    }

    @Test
    void rejectsRootsThatAreNotAbsoluteOrEndInSlash() {
        for (String bad : new String[] {"", "/", "//", "admin/bookie-clusters", "/admin/bookie-clusters/",
                "admin", " /admin"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new RegistryPaths(bad),
                    "'" + bad + "'");
            assertTrue(e.getMessage().contains("configPath"), e.getMessage());
            assertTrue(e.getMessage().endsWith(": " + bad), e.getMessage());
        }
    }

    @Test
    void rejectsRootsWithEmptyOrRelativeSegments() {
        for (String bad : new String[] {"/admin//bookie-clusters", "/admin/./x", "/admin/../x"}) {
            assertThrows(IllegalArgumentException.class, () -> new RegistryPaths(bad), bad);
        }
    }
}
