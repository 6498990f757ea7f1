package io.bcswitch.migration;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.Logger;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;

/**
 * The messages one logger writes while a test runs (the broker's Log4j 2, which the tests run with too), for tests
 * of what the operator reads in the broker's log. Closing it stops the capture.
 */
public final class LogCapture implements AutoCloseable {
    private static final AtomicInteger NAMES = new AtomicInteger();

    private final List<String> messages = Collections.synchronizedList(new ArrayList<>());
    private final Logger logger;
    private final AbstractAppender appender;

    /** Captures what the logger named after {@code loggerOf} writes. */
    public LogCapture(Class<?> loggerOf) {
        logger = (Logger) LogManager.getLogger(loggerOf.getName());
        appender = new AbstractAppender("log-capture-" + NAMES.incrementAndGet(), null, null, true,
                Property.EMPTY_ARRAY) {
            @Override
            public void append(LogEvent event) {
                messages.add(event.getMessage().getFormattedMessage());
            }
        };
        appender.start();
        logger.addAppender(appender);
    }

    /** The messages written so far, in order. */
    public List<String> messages() {
        synchronized (messages) {
            return List.copyOf(messages);
        }
    }

    @Override
    public void close() {
        logger.removeAppender(appender);
        appender.stop();
    }
}
