package io.bcswitch.bench.rollover;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.broker.protocol.ProtocolHandler;
import org.apache.pulsar.broker.service.BrokerService;

/**
 * Benchmark only, loaded into stock brokers ({@code messagingProtocols=bcs-bench-rollover}): a small HTTP endpoint
 * on the port {@value #PORT_KEY} names, {@code POST /rollover?match=<part of a managed ledger's name>&perSecond=<n>},
 * that rolls this broker's matching managed ledgers over to new ledgers at that pace ({@link PacedRollover}) and
 * answers {@code rolled <count>} once each writes its new ledger. The broker's protocol-handler interface is the same
 * on every Pulsar line, where the additional-servlet one is not.
 */
public final class RolloverProtocolHandler implements ProtocolHandler {
    /** The protocol name broker.conf lists in messagingProtocols. */
    public static final String NAME = "bcs-bench-rollover";
    /** broker.conf: the port the endpoint listens on (required). */
    public static final String PORT_KEY = "bcsBenchRolloverPort";
    public static final String PATH = "/rollover";
    private static final Duration DEADLINE = Duration.ofMinutes(2);
    private static final int DEFAULT_PER_SECOND = 100;

    private final ExecutorService worker = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, NAME);
        t.setDaemon(true);
        return t;
    });
    private InetSocketAddress address;
    private volatile PulsarService pulsar;

    @Override
    public String protocolName() {
        return NAME;
    }

    @Override
    public boolean accept(String protocol) {
        return NAME.equals(protocol);
    }

    @Override
    public void initialize(ServiceConfiguration conf) {
        String port = conf.getProperties().getProperty(PORT_KEY);
        if (port == null || port.isBlank()) {
            throw new IllegalArgumentException(NAME + ": set " + PORT_KEY + " in broker.conf");
        }
        address = new InetSocketAddress(conf.getBindAddress(), Integer.parseInt(port.trim()));
    }

    @Override
    public String getProtocolDataToAdvertise() {
        return Integer.toString(address.getPort());
    }

    @Override
    public void start(BrokerService service) {
        pulsar = service.getPulsar();
    }

    @Override
    public Map<InetSocketAddress, ChannelInitializer<SocketChannel>> newChannelInitializers() {
        return Map.of(address, new ChannelInitializer<>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(8192), new Endpoint());
            }
        });
    }

    @Override
    public void close() {
        worker.shutdownNow();
    }

    private final class Endpoint extends SimpleChannelInboundHandler<FullHttpRequest> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
            if (!req.decoderResult().isSuccess()) {
                answer(ctx, HttpResponseStatus.BAD_REQUEST, "not a request: " + req.decoderResult().cause());
                return;
            }
            QueryStringDecoder q = new QueryStringDecoder(req.uri());
            if (!q.path().equals(PATH) || !req.method().equals(HttpMethod.POST)) {
                answer(ctx, HttpResponseStatus.NOT_FOUND, "POST " + PATH + "?match=...&perSecond=...");
                return;
            }
            List<String> match = q.parameters().get("match");
            if (match == null || match.get(0).isEmpty()) {
                answer(ctx, HttpResponseStatus.BAD_REQUEST, "match is required");
                return;
            }
            int perSecond;
            try {
                List<String> given = q.parameters().get("perSecond");
                perSecond = given == null ? DEFAULT_PER_SECOND : Integer.parseInt(given.get(0));
            } catch (NumberFormatException e) {
                answer(ctx, HttpResponseStatus.BAD_REQUEST, "perSecond: " + e.getMessage());
                return;
            }
            PulsarService p = pulsar;
            if (p == null) {
                answer(ctx, HttpResponseStatus.SERVICE_UNAVAILABLE, "broker is starting");
                return;
            }
            String part = match.get(0);
            try {
                // the rollover paces itself and waits: never on the event loop
                CompletableFuture.supplyAsync(() -> PacedRollover.rollAll(
                                p.getDefaultManagedLedgerFactory().getManagedLedgers(), n -> n.contains(part),
                                perSecond, DEADLINE), worker)
                        .whenComplete((n, e) -> answer(ctx, e == null ? HttpResponseStatus.OK
                                : HttpResponseStatus.INTERNAL_SERVER_ERROR, e == null ? "rolled " + n : e.toString()));
            } catch (RejectedExecutionException e) {
                answer(ctx, HttpResponseStatus.SERVICE_UNAVAILABLE, "broker is shutting down");
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    private static void answer(ChannelHandlerContext ctx, HttpResponseStatus status, String body) {
        FullHttpResponse resp = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.copiedBuffer(body + "\n", StandardCharsets.UTF_8));
        resp.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8");
        resp.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, resp.content().readableBytes());
        ctx.writeAndFlush(resp).addListener(ChannelFutureListener.CLOSE);
    }
}
