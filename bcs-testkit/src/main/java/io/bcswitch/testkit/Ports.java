package io.bcswitch.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The loopback ports of one fixture, reserved on this machine until the fixture closes.
 *
 * <p>Bookies, brokers and a restartable ZooKeeper come back on the port they had (a bookie's
 * address is its identity), so a port must stay theirs while they are down. Two things took it
 * before: any outgoing connection of any process (the kernel hands out the ephemeral range for
 * local ports, and a port a stopped bookie left is a free ephemeral port), and another fixture in
 * another test JVM that found the port free at that moment. So ports are taken below the kernel's
 * ephemeral range, where no outgoing connection is given a port, and each is held by an exclusive
 * lock on its byte in one lock file shared by every JVM on the machine (released by the kernel
 * when a JVM dies, also by {@code kill -9}).
 */
public final class Ports implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Ports.class);
    /** Lowest port handed out: above the well-known and the usual registered service ports. */
    private static final int LOWEST = 10_000;
    private static final int DEFAULT_EPHEMERAL_LOW = 32_768;
    private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");

    private final List<FileLock> held = new ArrayList<>();
    private boolean closed;

    /** An empty reservation; {@link #take(int)} adds to it. */
    public static Ports reserve() {
        return new Ports();
    }

    /** {@code n} more ports, free on 127.0.0.1 now and reserved for this fixture until {@link #close()}. */
    public synchronized int[] take(int n) {
        if (closed) {
            throw new IllegalStateException("The fixture's ports are released");
        }
        int low = LOWEST;
        int high = ephemeralLow(); // exclusive
        int span = high - low;
        int[] ports = new int[n];
        int start = ThreadLocalRandom.current().nextInt(span);
        int found = 0;
        for (int i = 0; i < span && found < n; i++) {
            int port = low + (start + i) % span;
            if (tryTake(port)) {
                ports[found++] = port;
            }
        }
        if (found < n) {
            throw new IllegalStateException("No " + n + " free ports in [" + low + ", " + high + ")");
        }
        return ports;
    }

    /**
     * Reserves {@code port} for this fixture when no fixture on the machine holds it and it can be bound now;
     * false otherwise.
     */
    public synchronized boolean tryTake(int port) {
        if (closed) {
            throw new IllegalStateException("The fixture's ports are released");
        }
        FileLock lock = lock(port);
        if (lock == null) {
            return false;
        }
        if (!bindable(port)) {
            release(lock);
            return false;
        }
        held.add(lock);
        return true;
    }

    /** The ports this fixture holds, in the order it took them. */
    public synchronized List<Integer> held() {
        return held.stream().map(l -> (int) l.position()).toList();
    }

    /** Releases every port of this fixture. Idempotent. */
    @Override
    public synchronized void close() {
        closed = true;
        held.forEach(Ports::release);
        held.clear();
    }

    /** The lock on {@code port}'s byte, or null when another fixture (in this JVM or another) holds it. */
    private static FileLock lock(int port) {
        try {
            return LockFile.CHANNEL.tryLock(port, 1, false);
        } catch (OverlappingFileLockException heldInThisJvm) {
            return null;
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot lock port " + port + " in " + LockFile.PATH, e);
        }
    }

    private static void release(FileLock lock) {
        try {
            lock.release();
        } catch (IOException e) {
            LOG.warn("Cannot release the lock of port {}", lock.position(), e);
        }
    }

    /** True when a listening socket can be bound to 127.0.0.1:{@code port} now (as the servers do it). */
    public static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return true;
        } catch (IOException inUse) {
            return false;
        }
    }

    /** The first port of the kernel's range for outgoing connections (Linux), else the usual default. */
    public static int ephemeralLow() {
        try {
            String[] range = Files.readString(EPHEMERAL_RANGE).trim().split("\\s+");
            int low = Integer.parseInt(range[0]);
            // a range that leaves too little room below it: stay inside the usual layout rather than fail
            return low - LOWEST >= 1_000 ? low : DEFAULT_EPHEMERAL_LOW;
        } catch (IOException | RuntimeException e) {
            return DEFAULT_EPHEMERAL_LOW;
        }
    }

    /**
     * One channel for the whole JVM: closing any channel of a file drops every lock the process holds
     * on it (POSIX record locks), so the channel is opened once and never closed. The file is empty;
     * the locks are on byte ranges past its end.
     */
    private static final class LockFile {
        static final Path PATH = Path.of(System.getProperty("java.io.tmpdir"), "bcs-testkit-ports.lock");
        static final FileChannel CHANNEL = open();

        private static FileChannel open() {
            try {
                return FileChannel.open(PATH, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            } catch (IOException e) {
                throw new UncheckedIOException("Cannot open the port lock file " + PATH, e);
            }
        }
    }
}
