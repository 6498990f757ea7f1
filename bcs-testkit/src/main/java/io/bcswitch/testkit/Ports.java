package io.bcswitch.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/** Free loopback ports for components that need their port before they start (bookies). */
final class Ports {

    private Ports() {
    }

    /**
     * A port that was free on 127.0.0.1 a moment ago. Another process could still take it before
     * it is bound again; in practice the kernel hands out ephemeral ports round-robin.
     */
    static int freePort() {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("No free port", e);
        }
    }
}
