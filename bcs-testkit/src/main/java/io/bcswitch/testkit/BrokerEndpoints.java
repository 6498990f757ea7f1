package io.bcswitch.testkit;

/** Where a broker of either fixture (in-process or a separate process) is reached. */
public interface BrokerEndpoints {

    /** {@code pulsar://127.0.0.1:<port>} */
    String brokerServiceUrl();

    /** {@code http://127.0.0.1:<port>} */
    String webServiceUrl();
}
