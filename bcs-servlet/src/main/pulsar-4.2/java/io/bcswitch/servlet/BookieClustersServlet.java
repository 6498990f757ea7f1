package io.bcswitch.servlet;

/** The REST API's additional servlet on the Pulsar 4.2 line: the broker takes the servlet instance. */
public class BookieClustersServlet extends BookieClustersServletBase {
    @Override
    public Object getServletInstance() {
        return newServlet();
    }
}
