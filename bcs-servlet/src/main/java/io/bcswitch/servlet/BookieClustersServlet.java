package io.bcswitch.servlet;

import io.bcswitch.adapter.BookieClusterSwitchStorage;
import io.bcswitch.adapter.BrokerAuthorization;
import io.bcswitch.rest.BookieClustersApi;
import io.bcswitch.rest.RestResponse;
import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.web.plugin.servlet.AdditionalServletWithPulsarService;
import org.apache.pulsar.common.configuration.PulsarConfiguration;
import org.eclipse.jetty.ee8.nested.ContextHandler;

/**
 * Broker additional servlet ({@code additionalServlets=bookie-clusters}) serving
 * {@code /admin/v2/bookie-clusters}. It only adapts HTTP to {@link BookieClustersApi}, which it finds
 * through the broker's managed-ledger storage (the plugin must be the broker's
 * {@code managedLedgerStorageClassName}).
 */
public class BookieClustersServlet implements AdditionalServletWithPulsarService {
    public static final String BASE_PATH = "/admin/v2/bookie-clusters";
    private static final long REQUEST_TIMEOUT_SECONDS = 60;

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

    @Override
    public Object getServletInstance() {
        return new HttpServlet() {
            @Override
            public void init() {
                // Pulsar gives each additional servlet its own context at the base path; Jetty answers a request
                // for the base path itself (no trailing slash) with a redirect unless the context admits it, and
                // GET /admin/v2/bookie-clusters is how the list is asked for.
                ContextHandler context = ContextHandler.getContextHandler(getServletContext());
                if (context != null) {
                    context.setAllowNullPathInfo(true);
                }
            }

            @Override
            protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
                serve(req, resp);
            }
        };
    }

    private void serve(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        RestResponse out;
        BookieClustersApi a = api;
        if (a == null) {
            out = RestResponse.error(503, "bookie-clusters API unavailable: " + unavailableReason);
        } else {
            try {
                BrokerAuthorization.Decision decision = authorization.check(req::getAttribute, req::getHeader)
                        .get(REQUEST_TIMEOUT_SECONDS, TimeUnit.SECONDS);
                if (!decision.allowed()) {
                    out = RestResponse.error(decision.status(), decision.reason());
                } else {
                    // read the body only once the caller is known to be allowed
                    byte[] body = readBody(req.getInputStream(), BookieClustersApi.MAX_BODY_BYTES + 1);
                    out = a.handle(req.getMethod(), req.getPathInfo(), req.getQueryString(), req.getContentType(), body)
                            .get(REQUEST_TIMEOUT_SECONDS, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                out = RestResponse.error(503, "interrupted");
            } catch (TimeoutException e) {
                out = RestResponse.stillRunning(REQUEST_TIMEOUT_SECONDS);
            } catch (ExecutionException e) {
                out = RestResponse.failed(e);
            }
        }
        byte[] json = BookieClustersApi.toJson(out);
        resp.setStatus(out.status());
        resp.setContentType("application/json");
        resp.setCharacterEncoding("UTF-8");
        resp.setContentLength(json.length);
        resp.getOutputStream().write(json);
    }

    /** Reads at most {@code limit} bytes: enough to tell an oversized body without buffering it all. */
    private static byte[] readBody(InputStream in, int limit) throws IOException {
        return in.readNBytes(limit);
    }

    @Override
    public void close() {
        api = null;
    }
}
