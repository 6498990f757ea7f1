package io.bcswitch.servlet;

import org.eclipse.jetty.servlet.ServletHolder;

/** The REST API's additional servlet on the Pulsar 4.0 line: the broker takes a Jetty 9 servlet holder. */
public class BookieClustersServlet extends BookieClustersServletBase {
    @Override
    public ServletHolder getServletHolder() {
        return new ServletHolder(newServlet());
    }
}
