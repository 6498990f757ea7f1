package io.bcswitch.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/**
 * A long operation (cleanup, drain report, verify) started asynchronously; poll it with
 * {@link BookieClustersAdmin#operation(String)} until it is no longer {@code RUNNING}.
 *
 * @param id          the operation id
 * @param operation   {@code cleanup}, {@code drain} or {@code verify}
 * @param parameters  what was asked
 * @param broker      the broker that runs it
 * @param state       {@code RUNNING}, {@code DONE}, {@code FAILED} (the answer was an error), or {@code LOST} (the
 *                    broker running it stopped before it ended: start it again)
 * @param startedAt   epoch millis
 * @param finishedAt  epoch millis, null while running
 * @param httpStatus  the status the synchronous call would have answered, null while running
 * @param result      the body the synchronous call would have answered (an error's {@code reason}), null while running
 *                    and in listings
 */
public record Operation(String id, String operation, Map<String, Object> parameters, String broker, String state,
                        long startedAt, Long finishedAt, Integer httpStatus, JsonNode result) {

    public boolean running() {
        return "RUNNING".equals(state);
    }
}
