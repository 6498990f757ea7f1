package io.bcswitch.servlet;

import javax.servlet.ServletContext;
import org.eclipse.jetty.server.handler.ContextHandler;

/**
 * What the servlet needs from the broker's web server on the Pulsar 4.0 line (Jetty 9). Every line's source folder
 * ({@code src/main/pulsar-<line>/java}) has its own version of this class.
 */
final class LineServletSupport {
    private LineServletSupport() {
    }

    /**
     * Pulsar gives each additional servlet its own context at the base path; Jetty answers a request for the base
     * path itself (no trailing slash) with a redirect unless the context admits it, and GET /admin/v2/bookie-clusters
     * is how the list is asked for.
     */
    static void admitBasePathWithoutSlash(ServletContext servletContext) {
        ContextHandler context = ContextHandler.getContextHandler(servletContext);
        if (context != null) {
            context.setAllowNullPathInfo(true);
        }
    }
}
