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
     * {@code n} distinct ports that were free on 127.0.0.1 a moment ago. All are held open until each
     * is known, so the kernel cannot hand the same port out twice (taken one at a time and released,
     * the same ephemeral port can come back). Another process could still take one before it is bound
     * again.
     */
    static int[] freePorts(int n) {
        ServerSocket[] sockets = new ServerSocket[n];
        try {
            int[] ports = new int[n];
            for (int i = 0; i < n; i++) {
                sockets[i] = new ServerSocket();
                sockets[i].setReuseAddress(true);
                sockets[i].bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                ports[i] = sockets[i].getLocalPort();
            }
            return ports;
        } catch (IOException e) {
            throw new UncheckedIOException("No free port", e);
        } finally {
            for (ServerSocket s : sockets) {
                if (s != null) {
                    try {
                        s.close();
                    } catch (IOException e) {
                        // nothing to do
                    }
                }
            }
        }
    }
}
