package io.bcswitch.servlet;

/**
 * The REST API's additional servlet on the Pulsar 5.0 line: a jakarta servlet (the build rewrites the javax names
 * of the shared sources), so that the broker serves it in its ee10 environment behind its own authentication
 * filters; javax servlets are served without them on this line.
 */
public class BookieClustersServlet extends BookieClustersServletBase {
    @Override
    public AdditionalServletType getServletType() {
        return AdditionalServletType.JAKARTA_SERVLET;
    }

    @Override
    public Object getServletInstance() {
        return newServlet();
    }
}
