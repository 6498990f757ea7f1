package io.bcswitch.rest;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.annotation.Annotation;
import java.lang.reflect.Type;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import javax.ws.rs.WebApplicationException;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.MultivaluedMap;
import javax.ws.rs.core.Request;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.UriInfo;
import javax.ws.rs.ext.ExceptionMapper;
import javax.ws.rs.ext.MessageBodyWriter;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.server.ServerProperties;

/**
 * The Jersey application serving {@link BookieClustersApi}: the resource, the writer of its answers, and the mapping
 * of what Jersey itself refuses (no such path, a method the path does not take) to the API's {@code {"reason"}}
 * answers, so that a client sees one error shape whoever refused.
 */
public final class RestApplication {
    private RestApplication() {
    }

    /** The application for {@code api}: only the features registered here. */
    public static ResourceConfig of(BookieClustersApi api) {
        return new ResourceConfig()
                .registerInstances(api)
                .register(JsonWriter.class)
                .register(RefusalMapper.class)
                // no WADL at OPTIONS or /application.wadl: the API's description is the OpenAPI document
                .property(ServerProperties.WADL_FEATURE_DISABLE, true)
                // no Jackson or other feature found on the broker's class path: answers are written by JsonWriter
                // (services such as the servlet container's asynchronous support are still looked up)
                .property(ServerProperties.FEATURE_AUTO_DISCOVERY_DISABLE, true);
    }

    private static final List<String> METHOD_ORDER = List.of("GET", "POST", "PUT", "DELETE", "PATCH");

    /**
     * The methods a route takes, in the order the API documents them; HEAD and OPTIONS, which Jersey answers for
     * every route, are left out.
     */
    static String allowed(Set<String> methods) {
        return methods.stream().filter(m -> !m.equals("HEAD") && !m.equals("OPTIONS"))
                .sorted(Comparator.comparingInt(m -> METHOD_ORDER.contains(m) ? METHOD_ORDER.indexOf(m)
                        : METHOD_ORDER.size()))
                .collect(Collectors.joining(", "));
    }

    /** Writes a {@link RestResponse}'s body as JSON. */
    public static final class JsonWriter implements MessageBodyWriter<RestResponse> {
        @Override
        public boolean isWriteable(Class<?> type, Type genericType, Annotation[] annotations, MediaType mediaType) {
            return type == RestResponse.class;
        }

        @Override
        public void writeTo(RestResponse r, Class<?> type, Type genericType, Annotation[] annotations,
                            MediaType mediaType, MultivaluedMap<String, Object> headers, OutputStream out)
                throws IOException {
            out.write(BookieClustersApi.toJson(r));
        }
    }

    /**
     * What Jersey refused before a route ran (404, 405, ...) or failed with, answered as the API answers its own
     * refusals.
     */
    public static final class RefusalMapper implements ExceptionMapper<Throwable> {
        @Context
        private UriInfo uri;
        @Context
        private Request request;

        @Override
        public Response toResponse(Throwable e) {
            if (!(e instanceof WebApplicationException w)) {
                return ApiErrors.toHttp(ApiErrors.toResponse(e));
            }
            int status = w.getResponse().getStatus();
            String message = switch (status) {
                case 404 -> "no such endpoint: /" + uri.getPath(true).replaceFirst("^/", "");
                case 405 -> "method " + request.getMethod() + " is not allowed here (allowed: "
                        + allowed(w.getResponse().getAllowedMethods()) + ")";
                default -> w.getMessage();
            };
            return ApiErrors.toHttp(RestResponse.error(status, message));
        }
    }
}
