package io.bcswitch.servlet;

import io.bcswitch.adapter.BookieClusterSwitchStorage;
import io.bcswitch.adapter.BrokerAuthorization;
import io.bcswitch.rest.BookieClustersApi;
import io.bcswitch.rest.RestResponse;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Arrays;
import java.util.stream.Collectors;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import io.bcswitch.rest.RestApplication;
import javax.servlet.ServletException;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.web.plugin.servlet.AdditionalServletWithPulsarService;
import org.apache.pulsar.common.configuration.PulsarConfiguration;
import org.glassfish.jersey.servlet.ServletContainer;
import org.glassfish.jersey.uri.UriComponent;

/**
 * Broker additional servlet ({@code additionalServlets=bookie-clusters}) serving
 * {@code /admin/v2/bookie-clusters}. It checks that the caller may use the API (a super-user when the broker has
 * authorization on) and hands the request to {@link BookieClustersApi} served by Jersey; it finds the API
 * through the broker's managed-ledger storage (the plugin must be the broker's
 * {@code managedLedgerStorageClassName}).
 *
 * <p>What the broker loads is {@code BookieClustersServlet}, one per Pulsar line ({@code src/main/pulsar-<line>/java}):
 * the lines hand the servlet to the broker's web server differently (4.0: a Jetty 9 {@code ServletHolder}; from 4.1
 * on the servlet instance).
 */
public abstract class BookieClustersServletBase implements AdditionalServletWithPulsarService {
    public static final String BASE_PATH = "/admin/v2/bookie-clusters";
    private static final long AUTHORIZATION_TIMEOUT_SECONDS = 60;

    private volatile BookieClustersApi api;
    private volatile BrokerAuthorization authorization;
    private volatile String unavailableReason = "broker is starting";

    @Override
    public void loadConfig(PulsarConfiguration pulsarConfiguration) {
        // all settings are read by the storage plugin
    }

    @Override
    public void setPulsarService(PulsarService pulsarService) {
        Object storage = pulsarService.getManagedLedgerStorage();
        if (storage instanceof BookieClusterSwitchStorage s) {
            s.bindBroker(pulsarService);
            authorization = new BrokerAuthorization(pulsarService);
            api = s.restApi();
        } else {
            unavailableReason = "managedLedgerStorageClassName is not " + BookieClusterSwitchStorage.class.getName()
                    + " on this broker";
        }
    }

    @Override
    public String getBasePath() {
        return BASE_PATH;
    }

    /** A new servlet serving the API. */
    protected final HttpServlet newServlet() {
        return new HttpServlet() {
            private ServletContainer jersey;

            @Override
            public void init() throws ServletException {
                LineServletSupport.admitBasePathWithoutSlash(getServletContext());
                BookieClustersApi a = api;
                if (a != null) {
                    jersey = new ServletContainer(RestApplication.of(a));
                    jersey.init(getServletConfig());
                }
            }

            @Override
            protected void service(HttpServletRequest req, HttpServletResponse resp)
                    throws IOException, ServletException {
                RestResponse refused = jersey == null
                        ? RestResponse.error(503, "bookie-clusters API unavailable: " + unavailableReason)
                        : refusal(req);
                if (refused != null) {
                    write(resp, refused);
                } else {
                    // the caller is allowed: only now is the request, body and all, handed to the API
                    serveAllowed(jersey, req, resp);
                }
            }

            @Override
            public void destroy() {
                if (jersey != null) {
                    jersey.destroy();
                }
            }
        };
    }

    /**
     * Hands the request to Jersey at the path Jetty resolved (decoded, dot segments removed: {@code /%2E} is the
     * collection itself), not at the raw request URI Jersey would otherwise match, so that every spelling of a path
     * reaches the route it names.
     */
    private static void serveAllowed(ServletContainer jersey, HttpServletRequest req, HttpServletResponse resp)
            throws IOException, ServletException {
        String pathInfo = req.getPathInfo() == null ? "" : req.getPathInfo();
        URI base;
        URI uri;
        try {
            base = new URI(req.getScheme(), null, req.getServerName(), req.getServerPort(),
                    req.getContextPath() + "/", null, null);
            String query = req.getQueryString() == null ? null
                    : UriComponent.contextualEncode(req.getQueryString(), UriComponent.Type.QUERY);
            uri = URI.create(base + encodedPath(pathInfo) + (query == null || query.isEmpty() ? "" : "?" + query));
        } catch (URISyntaxException | IllegalArgumentException e) {
            write(resp, RestResponse.error(400, "malformed request URI: " + e.getMessage()));
            return;
        }
        jersey.service(base, uri, req, resp);
    }

    /**
     * The decoded path, each segment encoded again as a whole: a ';' or '/' that was encoded in the request stays
     * part of its segment (a name), never a matrix parameter or a separator.
     */
    static String encodedPath(String decodedPathInfo) {
        String p = decodedPathInfo.startsWith("/") ? decodedPathInfo.substring(1) : decodedPathInfo;
        return Arrays.stream(p.split("/", -1))
                .map(segment -> UriComponent.encode(segment, UriComponent.Type.PATH_SEGMENT))
                .collect(Collectors.joining("/"));
    }

    /** Null when the caller may use the API; otherwise the answer that refuses it. */
    private RestResponse refusal(HttpServletRequest req) {
        try {
            BrokerAuthorization.Decision decision = authorization.check(req::getAttribute, req::getHeader)
                    .get(AUTHORIZATION_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            return decision.allowed() ? null : RestResponse.error(decision.status(), decision.reason());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return RestResponse.error(503, "interrupted");
        } catch (TimeoutException e) {
            return RestResponse.error(503, "authorization did not complete within " + AUTHORIZATION_TIMEOUT_SECONDS
                    + "s");
        } catch (ExecutionException e) {
            return RestResponse.failed(e);
        }
    }

    private static void write(HttpServletResponse resp, RestResponse out) throws IOException {
        byte[] json = BookieClustersApi.toJson(out);
        resp.setStatus(out.status());
        resp.setContentType("application/json");
        resp.setCharacterEncoding("UTF-8");
        resp.setContentLength(json.length);
        resp.getOutputStream().write(json);
    }

    @Override
    public void close() {
        api = null;
    }
}
