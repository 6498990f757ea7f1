package io.bcswitch.it.support;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;

/**
 * WARN and ERROR lines of every logger in this JVM (the broker runs in-process), kept in memory; or, from
 * {@link #install(String, String)}, the INFO and higher lines of one logger that contain a text.
 */
public final class LogCapture extends AbstractAppender {
    /** What the broker logs when a schema read that routing sent to a ledger failed and its own copy answered. */
    public static final String SCHEMA_FALLBACK = "answered from this broker's copy";
    private final ConcurrentLinkedQueue<String> lines = new ConcurrentLinkedQueue<>();
    private final AtomicLong count = new AtomicLong();

    /** Only lines of this logger (null: every logger). */
    private final String logger;
    /** Only lines containing this (null: every line). */
    private final String needle;

    private LogCapture(String name, String logger, String needle) {
        super(name, null, null, true, Property.EMPTY_ARRAY);
        this.logger = logger;
        this.needle = needle;
    }

    public static LogCapture install() {
        return install(new LogCapture("test-log-capture", null, null), Level.WARN);
    }

    /** The lines of logger {@code logger} (INFO and higher) that contain {@code needle}. */
    public static LogCapture install(String logger, String needle) {
        return install(new LogCapture("test-log-capture-" + logger, logger, needle), Level.INFO);
    }

    private static LogCapture install(LogCapture capture, Level level) {
        capture.start();
        LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        ctx.getConfiguration().getRootLogger().addAppender(capture, level, null);
        ctx.updateLoggers();
        return capture;
    }

    public void remove() {
        LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        ctx.getConfiguration().getRootLogger().removeAppender(getName());
        ctx.updateLoggers();
        stop();
    }

    @Override
    public void append(LogEvent event) {
        if (logger != null && !logger.equals(event.getLoggerName())
                || needle != null && !event.getMessage().getFormattedMessage().contains(needle)) {
            return;
        }
        if (count.incrementAndGet() > 20_000) {
            return;
        }
        // Pulsar 5.0 logs the details (a read position, a topic) as attributes in the event's context data
        // rather than in the message
        String line = event.getLevel() + " " + event.getLoggerName() + " - "
                + event.getMessage().getFormattedMessage()
                + (event.getContextData().isEmpty() ? "" : " " + event.getContextData().toMap())
                + (event.getThrown() == null ? "" : " | " + event.getThrown());
        lines.add(line);
    }

    /** The lines captured since the last call (or since it was installed), taken out. */
    public List<String> take() {
        List<String> out = new ArrayList<>();
        for (String line = lines.poll(); line != null; line = lines.poll()) {
            out.add(line);
        }
        return out;
    }

    public void clear() {
        lines.clear();
        count.set(0);
    }

    public List<String> matching(List<String> needles) {
        List<String> out = new ArrayList<>();
        for (String line : lines) {
            if (needles.stream().anyMatch(line::contains)) {
                out.add(line);
            }
        }
        return out;
    }
}
