package io.bcswitch.rest;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.glassfish.jersey.internal.MapPropertiesDelegate;
import org.glassfish.jersey.server.ApplicationHandler;
import org.glassfish.jersey.server.ContainerRequest;
import org.glassfish.jersey.server.ContainerResponse;
import org.glassfish.jersey.uri.UriComponent;

/**
 * Serves a {@link BookieClustersApi} through the same Jersey application the broker's servlet runs, in memory: the
 * request is routed, its parameters bound and its refusals mapped by Jersey, and the answer comes back as the
 * {@link RestResponse} the API produced (typed body, before it is written as JSON).
 */
final class InMemoryRest {
    private static final URI BASE = URI.create("http://localhost/admin/v2/bookie-clusters/");
    private final ApplicationHandler app;

    InMemoryRest(BookieClustersApi api) {
        this.app = new ApplicationHandler(RestApplication.of(api));
    }

    CompletableFuture<RestResponse> handle(String method, String path, String contentType, byte[] body) {
        return handle(method, path, null, contentType, body);
    }

    /** @param path below the base path, as a client would send it (unsafe characters are encoded here) */
    CompletableFuture<RestResponse> handle(String method, String path, String query, String contentType,
                                           byte[] body) {
        String p = path == null ? "" : path.startsWith("/") ? path.substring(1) : path;
        URI uri = URI.create(BASE + UriComponent.contextualEncode(p, UriComponent.Type.PATH)
                + (query == null ? "" : "?" + UriComponent.contextualEncode(query, UriComponent.Type.QUERY)));
        // HTTP methods are upper case on the wire; tests may write them either way
        ContainerRequest request = new ContainerRequest(BASE, uri, method.toUpperCase(java.util.Locale.ROOT), null, new MapPropertiesDelegate(),
                app.getConfiguration());
        if (contentType != null) {
            request.header("Content-Type", contentType);
        }
        request.setEntityStream(new ByteArrayInputStream(body == null ? new byte[0] : body));
        try {
            ContainerResponse response = app.apply(request, new ByteArrayOutputStream()).get(30, TimeUnit.SECONDS);
            Object entity = response.getEntity();
            return CompletableFuture.completedFuture(entity instanceof RestResponse r ? r
                    : new RestResponse(response.getStatus(), entity));
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
