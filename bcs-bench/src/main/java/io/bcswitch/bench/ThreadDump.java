package io.bcswitch.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;

/**
 * Every thread's stack (with the locks it holds and waits for), for a scenario that finds the in-process cluster not
 * answering: the clusters are closed once the scenario ends, so this is the only moment the cause can be seen.
 */
final class ThreadDump {
    private ThreadDump() {
    }

    static String of(String why) {
        StringBuilder b = new StringBuilder("thread dump (" + why + "):\n");
        for (ThreadInfo t : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
            b.append('"').append(t.getThreadName()).append("\" ").append(t.getThreadState());
            if (t.getLockName() != null) {
                b.append(" on ").append(t.getLockName());
            }
            if (t.getLockOwnerName() != null) {
                b.append(" owned by \"").append(t.getLockOwnerName()).append('"');
            }
            b.append('\n');
            // ThreadInfo.toString cuts stacks at 8 frames; a wedge is usually deeper
            for (StackTraceElement e : t.getStackTrace()) {
                b.append("    at ").append(e).append('\n');
            }
            b.append('\n');
        }
        return b.toString();
    }
}
