package io.bcswitch.bench;

import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Map;

/** Where a benchmark ran, for its result file: figures from a 2-core box are not figures from a server. */
final class Machine {
    private Machine() {
    }

    static Map<String, Object> describe() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("cores", Runtime.getRuntime().availableProcessors());
        m.put("maxHeapMb", Runtime.getRuntime().maxMemory() >> 20);
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            m.put("physicalMemoryMb", os.getTotalMemorySize() >> 20);
        }
        m.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch"));
        return m;
    }
}
