package io.bcswitch.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A broker's network path to the metadata store (ZooKeeper), as a loopback TCP relay that a test can
 * {@link #pause()}: bytes stop flowing both ways while every connection stays open, like a network
 * partition shorter than the session timeout. The broker's session, and with it its ephemeral nodes,
 * stays alive; it just sees nothing (no watch fires, no read or write completes) until
 * {@link #resume()}.
 *
 * <p>The relay listens on one port for its whole life, so a restarted broker goes through it again.
 */
public final class MetadataLink implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MetadataLink.class);

    private final String name;
    private final InetSocketAddress target;
    private final ServerSocket server;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final Object gate = new Object();
    private boolean paused;
    private volatile boolean closed;

    private MetadataLink(String name, InetSocketAddress target) throws IOException {
        this.name = name;
        this.target = target;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::acceptLoop, name + "-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** A relay to {@code host:port} named {@code name} (thread names, logs). */
    static MetadataLink open(String name, String hostPort) throws IOException {
        int colon = hostPort.lastIndexOf(':');
        return new MetadataLink(name, new InetSocketAddress(hostPort.substring(0, colon),
                Integer.parseInt(hostPort.substring(colon + 1))));
    }

    /** {@code 127.0.0.1:<port>} to connect to instead of the metadata store. */
    public String connectString() {
        return "127.0.0.1:" + server.getLocalPort();
    }

    /** Stops forwarding in both directions; connections stay open. */
    public void pause() {
        synchronized (gate) {
            paused = true;
        }
        LOG.info("{}: paused (broker cut off from the metadata store)", name);
    }

    /** Forwards again, starting with what was held back. */
    public void resume() {
        synchronized (gate) {
            paused = false;
            gate.notifyAll();
        }
        LOG.info("{}: resumed", name);
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket();
                try {
                    upstream.connect(target, 10_000);
                } catch (IOException e) {
                    closeQuietly(client);
                    closeQuietly(upstream);
                    continue;
                }
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(upstream);
                pump(client, upstream, "up");
                pump(upstream, client, "down");
            } catch (IOException e) {
                if (!closed) {
                    LOG.warn("{}: accept failed: {}", name, e.toString());
                }
            }
        }
    }

    private void pump(Socket from, Socket to, String direction) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    awaitOpen();
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // the other side closed, or the link is closing
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                sockets.remove(from);
                sockets.remove(to);
            }
        }, name + "-" + direction);
        t.setDaemon(true);
        t.start();
    }

    private void awaitOpen() throws InterruptedException {
        synchronized (gate) {
            while (paused && !closed) {
                gate.wait();
            }
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    @Override
    public void close() {
        closed = true;
        resume();
        try {
            server.close();
        } catch (IOException e) {
            // closing anyway
        }
        sockets.forEach(MetadataLink::closeQuietly);
        sockets.clear();
    }
}
