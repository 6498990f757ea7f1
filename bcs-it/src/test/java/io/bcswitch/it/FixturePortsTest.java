package io.bcswitch.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bcswitch.testkit.Ports;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The fixtures' ports: a bookie, broker or ZooKeeper that is stopped keeps its port for its restart. Before, the
 * ports came from the kernel's range for outgoing connections and were only free "a moment ago": a disaster test's
 * bookies could not come back ("bind(..) failed: Address already in use") when, while they were down, a connection
 * of this or another test JVM had been given one of their ports.
 */
class FixturePortsTest {

    @Test
    void twoFixturesNeverShareAPortAndNoneIsWhereOutgoingConnectionsGetTheirs() {
        int[] first;
        try (Ports a = Ports.reserve(); Ports b = Ports.reserve()) {
            first = a.take(100);
            int[] second = b.take(100);
            Set<Integer> all = new HashSet<>();
            Arrays.stream(first).forEach(all::add);
            Arrays.stream(second).forEach(all::add);
            assertEquals(200, all.size(), "ports handed out twice: " + Arrays.toString(first) + " "
                    + Arrays.toString(second));
            for (int port : all) {
                assertTrue(port >= 10_000 && port < Ports.ephemeralLow(), "port " + port);
            }
            assertFalse(b.tryTake(first[0]), "a port of another fixture");
        }
        try (Ports c = Ports.reserve()) {
            assertTrue(c.tryTake(first[0]), "a released port is free again");
        }
    }

    @Test
    void aPortHeldByAnotherJvmIsNotHandedOutUntilThatJvmDiesEvenByKillMinusNine() throws Exception {
        Process holder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), PortHolder.class.getName(), "3")
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (Ports mine = Ports.reserve()) {
            String line = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8))
                    .readLine();
            assertTrue(line != null && !line.isBlank(), "the holder printed no ports");
            int[] theirs = Arrays.stream(line.trim().split(" ")).mapToInt(Integer::parseInt).toArray();
            for (int port : theirs) {
                assertFalse(mine.tryTake(port), "port " + port + " of the other JVM's fixture");
            }
            holder.destroyForcibly(); // SIGKILL: no close, no shutdown hook
            assertTrue(holder.waitFor(30, TimeUnit.SECONDS));
            for (int port : theirs) {
                assertTrue(mine.tryTake(port), "port " + port + " after its holder was killed");
            }
        } finally {
            holder.destroyForcibly();
        }
    }

    /** Another test JVM: reserves {@code args[0]} ports, prints them and keeps them until it is killed. */
    static final class PortHolder {
        public static void main(String[] args) throws Exception {
            Ports ports = Ports.reserve();
            int[] taken = ports.take(Integer.parseInt(args[0]));
            System.out.println(String.join(" ", Arrays.stream(taken).mapToObj(Integer::toString).toList()));
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
    }
}
