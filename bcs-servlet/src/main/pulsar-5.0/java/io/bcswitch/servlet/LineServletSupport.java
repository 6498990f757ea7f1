package io.bcswitch.servlet;

import javax.servlet.ServletContext;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;

/**
 * What the servlet needs from the broker's web server on the Pulsar 5.0 line (Jetty 12, ee10 layer for jakarta
 * servlets). Every line's source folder ({@code src/main/pulsar-<line>/java}) has its own version of this class.
 */
final class LineServletSupport {
    private LineServletSupport() {
    }

    /**
     * Pulsar gives each additional servlet its own context at the base path; Jetty answers a request for the base
     * path itself (no trailing slash) with a redirect unless the context admits it, and GET /admin/v2/bookie-clusters
     * is how the list is asked for.
     *
     * <p>The shared sources are written against javax.servlet and rewritten to jakarta.servlet by the build on this
     * line, so the context handed in is a jakarta one at run time; the cast says so to the compiler.
     */
    static void admitBasePathWithoutSlash(ServletContext servletContext) {
        ServletContextHandler context = ServletContextHandler.getServletContextHandler(
                (jakarta.servlet.ServletContext) (Object) servletContext);
        if (context != null) {
            context.setAllowNullPathInContext(true);
        }
    }
}
