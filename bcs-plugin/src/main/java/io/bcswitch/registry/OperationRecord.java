package io.bcswitch.registry;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/**
 * A long operation started asynchronously ({@code <configPath>/operations/<id>}): what was asked, which broker runs
 * it, and, once it ended, the HTTP status and body the synchronous call would have answered. Any broker can report it.
 *
 * @param operation   {@code cleanup}, {@code drain} or {@code verify}
 * @param parameters  what the request asked (cluster, dry run, ...)
 * @param broker      id of the broker that runs it
 * @param state       {@link #RUNNING}, {@link #DONE} (status below 400) or {@link #FAILED}
 * @param startedAt   epoch millis
 * @param finishedAt  epoch millis, null while running
 * @param httpStatus  the status the synchronous call would have answered, null while running
 * @param result      the body the synchronous call would have answered (its error when it failed), null while running
 *                    and while it is stored in chunks
 * @param resultChunks null: the result is here; else it is stored in this many chunks under
 *                    {@code <configPath>/operation-results/<id>} (a result larger than a metadata node should be;
 *                    added after format 1: a record without it has its result here)
 */
public record OperationRecord(int formatVersion, String id, String operation, Map<String, Object> parameters,
                              String broker, String state, long startedAt, Long finishedAt, Integer httpStatus,
                              JsonNode result,
                              @JsonInclude(JsonInclude.Include.NON_NULL) Integer resultChunks) {
    public static final int FORMAT_VERSION = 1;
    public static final String RUNNING = "RUNNING";
    public static final String DONE = "DONE";
    public static final String FAILED = "FAILED";
    /** Only in answers, never stored: the broker that ran it stopped before it ended. */
    public static final String LOST = "LOST";

    public static OperationRecord started(String id, String operation, Map<String, Object> parameters, String broker,
                                          long now) {
        return new OperationRecord(FORMAT_VERSION, id, operation, parameters, broker, RUNNING, now, null, null, null,
                null);
    }

    /** Ended with {@code body} stored here (chunks null) or in {@code chunks} chunks (body null). */
    public OperationRecord finished(int status, JsonNode body, Integer chunks, long now) {
        return new OperationRecord(formatVersion, id, operation, parameters, broker, status < 400 ? DONE : FAILED,
                startedAt, now, status, body, chunks);
    }

    public OperationRecord withState(String newState) {
        return new OperationRecord(formatVersion, id, operation, parameters, broker, newState, startedAt, finishedAt,
                httpStatus, result, resultChunks);
    }

    /** With {@code newResult} here (null: none), as answered: never with chunks. */
    public OperationRecord withResult(JsonNode newResult) {
        return new OperationRecord(formatVersion, id, operation, parameters, broker, state, startedAt, finishedAt,
                httpStatus, newResult, null);
    }

    public boolean running() {
        return RUNNING.equals(state);
    }
}
