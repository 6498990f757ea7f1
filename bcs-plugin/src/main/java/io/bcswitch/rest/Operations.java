package io.bcswitch.rest;

import com.fasterxml.jackson.databind.JsonNode;
import io.bcswitch.registry.Json;
import io.bcswitch.registry.OperationRecord;
import io.bcswitch.registry.RegistryStore;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Long operations (cleanup, drain report, verify) started with one call that answers 202 and an operation id at
 * once (asked with {@code async=true}, or adopted when the synchronous call runs longer than its caller waits), and
 * polled with {@code GET /operations/{id}}, the way Pulsar's {@code topics offload} / {@code offload-status}
 * work. The operation runs on the broker that was asked; its record, and at its end the status and body the
 * synchronous call would have answered, are kept in the metadata store so that any broker can report it. The
 * {@value #KEEP} that finished last of the last day are kept, and any that finished in the last ten minutes.
 */
public final class Operations {
    private static final Logger log = LoggerFactory.getLogger(Operations.class);
    /** Finished operations kept (each listing reads them all, and a result may be large). */
    static final int KEEP = 20;
    /** An operation that finished this recently is kept (its caller may still be polling it), beyond {@link #KEEP}. */
    static final long FOLLOW_MILLIS = TimeUnit.MINUTES.toMillis(10);
    /** Finished operations older than this are removed. */
    static final long KEEP_MILLIS = TimeUnit.DAYS.toMillis(1);
    /**
     * A result larger than this is stored in chunks of this size beside its record (metadata store nodes should
     * stay small; ZooKeeper refuses 1 MB).
     */
    static final int MAX_RESULT_BYTES = 256 * 1024;
    /**
     * A result larger than this many chunks (4 MB) is not kept (the metadata store holds what it stores in memory):
     * the operation ends FAILED, saying so.
     */
    static final int MAX_RESULT_CHUNKS = 16;

    private final RegistryStore registry;
    private final Supplier<String> brokerId;
    private final Clock clock;
    private final Executor starter;
    /** Operations this broker runs now: a record of this broker that says RUNNING and is not here was lost. */
    private final Set<String> runningHere = ConcurrentHashMap.newKeySet();

    /**
     * @param starter runs the start of each operation's work: not the metadata store's callback thread, which
     *                completes the write of its record
     */
    public Operations(RegistryStore registry, Supplier<String> brokerId, Clock clock, Executor starter) {
        this.registry = registry;
        this.brokerId = brokerId;
        this.clock = clock;
        this.starter = starter;
    }

    /**
     * Records the operation and starts {@code work} (which completes with the synchronous call's answer; a failure
     * is mapped to its answer here); answers 202 with the record once it is stored.
     */
    public CompletableFuture<RestResponse> start(String operation, Map<String, Object> parameters,
                                                 Supplier<CompletableFuture<RestResponse>> work) {
        return record(operation, parameters).thenCompose(started -> CompletableFuture.supplyAsync(() -> {
            CompletableFuture<RestResponse> f;
            try {
                f = work.get();
            } catch (RuntimeException e) {
                f = CompletableFuture.completedFuture(ApiErrors.toResponse(e));
            }
            return finishWhenDone(started, f);
        }, starter).whenComplete((accepted, e) -> {
            if (e != null) {
                // the starter refused the work (the broker stops): nothing will end it, so it is lost, not running
                runningHere.remove(started.id());
            }
        }));
    }

    /**
     * Records {@code running}, a synchronous call's work that has run for longer than its caller waits, as an
     * operation; answers 202 with the record once it is stored, and the operation ends with the call's answer
     * like one started with {@link #start}.
     */
    public CompletableFuture<RestResponse> adopt(String operation, Map<String, Object> parameters,
                                                 CompletableFuture<RestResponse> running) {
        return record(operation, parameters).thenApply(started -> {
            log.info("operation {}: the synchronous call ran longer than its answer waits, it continues as this "
                    + "operation", started.id());
            return finishWhenDone(started, running);
        });
    }

    private CompletableFuture<OperationRecord> record(String operation, Map<String, Object> parameters) {
        String id = operation + "-" + Long.toString(clock.millis(), 36) + "-"
                + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x100000, 0x1000000));
        OperationRecord started = OperationRecord.started(id, operation, parameters, brokerId.get(), clock.millis());
        // running here before its record exists: whoever reads the record finds it running, not lost
        runningHere.add(id);
        return registry.write(registry.paths().operation(id), started, -1).whenComplete((v, e) -> {
            if (e != null) {
                runningHere.remove(id);
            }
        }).thenApply(v -> {
            log.info("operation {} started on broker {}: {} {}", id, started.broker(), operation, parameters);
            return started;
        });
    }

    /** 202 with {@code started}; its record gets {@code work}'s answer when that comes. */
    private RestResponse finishWhenDone(OperationRecord started, CompletableFuture<RestResponse> work) {
        String id = started.id();
        // serialising an answer of megabytes is not for the thread that completed the work (a metadata callback)
        work.exceptionally(ApiErrors::toResponse).thenComposeAsync(answer -> kept(id, answer), starter)
                .thenCompose(answer -> registry.update(registry.paths().operation(id), OperationRecord.class,
                        cur -> cur.map(c -> c.finished(answer.status(), answer.body(), answer.chunks(),
                                clock.millis()))))
                .whenComplete((done, e) -> {
                    runningHere.remove(id);
                    if (e != null) {
                        log.error("operation {} ended but its result could not be stored", id, e);
                    } else if (done != null) {
                        log.info("operation {} {} ({}) in {} ms", id, done.state(), done.httpStatus(),
                                done.finishedAt() - done.startedAt());
                    }
                    prune();
                });
        return new RestResponse(202, started);
    }

    /** An answer as its record keeps it: its body there (chunks null), or stored in that many chunks (body null). */
    private record Kept(int status, JsonNode body, Integer chunks) {
    }

    /** The status an operation ends with when its answer is too large to keep. */
    static final int TOO_LARGE = 413;

    /**
     * The answer kept: its body in the record when it fits in {@value #MAX_RESULT_BYTES} bytes, else stored in
     * chunks of that size beside it (a verify that finds many violations, a large cleanup); when it is larger than
     * {@value #MAX_RESULT_CHUNKS} chunks, an error ({@value #TOO_LARGE}) saying so and with which status the work
     * itself ended, never a success whose body is not the answer.
     */
    private CompletableFuture<Kept> kept(String id, RestResponse answer) {
        JsonNode body = Json.mapper().valueToTree(answer.body());
        byte[] bytes = Json.write(body);
        if (bytes.length <= MAX_RESULT_BYTES) {
            return CompletableFuture.completedFuture(new Kept(answer.status(), body, null));
        }
        if (bytes.length > (long) MAX_RESULT_BYTES * MAX_RESULT_CHUNKS) {
            log.warn("operation {} ended with HTTP {}, but its answer ({} bytes) is too large to keep", id,
                    answer.status(), bytes.length);
            RestResponse note = RestResponse.error(TOO_LARGE, "the operation ended with HTTP " + answer.status()
                    + ", but its answer (" + bytes.length + " bytes) is larger than the "
                    + MAX_RESULT_CHUNKS * (MAX_RESULT_BYTES / 1024) + " KB an operation keeps: see the broker's log "
                    + "and status, or narrow the call (cleanup's maxDeletions)");
            return CompletableFuture.completedFuture(new Kept(TOO_LARGE, Json.mapper().valueToTree(note.body()),
                    null));
        }
        return registry.writeOperationResult(id, bytes, MAX_RESULT_BYTES)
                .thenApply(chunks -> new Kept(answer.status(), null, chunks));
    }

    /** {@code GET /operations/{id}}: the record, its result put together when stored in chunks (404 when unknown). */
    public CompletableFuture<RestResponse> get(String id) {
        // what runs here is looked at before the record is read: an operation of this broker that ends meanwhile
        // has its record say so by the time it no longer runs here, so it is never taken for lost
        Set<String> here = Set.copyOf(runningHere);
        return read(id).thenCombine(registry.pulsarLiveBrokers(), (r, live) -> r != null
                        ? RestResponse.ok(view(r, live, here))
                        : RestResponse.error(404, "no operation '" + id + "' (finished operations are kept for a "
                                + "day, the newest " + KEEP + " of them)"));
    }

    /** The record (null: none), its result put together when it is stored in chunks. */
    private CompletableFuture<OperationRecord> read(String id) {
        return registry.readOperation(id).thenCompose(r -> !r.present() || r.value().resultChunks() == null
                ? CompletableFuture.completedFuture(r.present() ? r.value() : null)
                // a chunk gone: the operation was removed meanwhile, as if its record had been read a moment later
                : registry.readOperationResult(id, r.value().resultChunks()).thenApplyAsync(bytes -> bytes
                        .map(b -> r.value().withResult(Json.read(b, JsonNode.class))).orElse(null), starter));
    }

    /** {@code GET /operations}: every kept operation, newest first, without results. */
    public CompletableFuture<RestResponse> list() {
        Set<String> here = Set.copyOf(runningHere);
        return all().thenCombine(registry.pulsarLiveBrokers(), (ops, live) -> {
            List<OperationRecord> out = new ArrayList<>();
            for (OperationRecord o : ops) {
                out.add(view(o, live, here).withResult(null));
            }
            return RestResponse.ok(out);
        });
    }

    private CompletableFuture<List<OperationRecord>> all() {
        return registry.listOperationIds().thenCompose(ids -> {
            List<CompletableFuture<Optional<OperationRecord>>> reads = new ArrayList<>();
            for (String id : ids) {
                reads.add(registry.readOperation(id).thenApply(v -> Optional.ofNullable(v.value())));
            }
            return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply(x -> reads.stream()
                    .map(CompletableFuture::join).flatMap(Optional::stream)
                    .sorted(Comparator.comparingLong(OperationRecord::startedAt).reversed()).toList());
        });
    }

    /**
     * The record as answered: RUNNING becomes LOST when the broker running it is gone, or is this broker and does
     * not run it (it restarted), or it has run for longer than a day.
     *
     * @param here the operations this broker ran just before the record was read
     */
    private OperationRecord view(OperationRecord r, Set<String> live, Set<String> here) {
        if (!r.running()) {
            return r;
        }
        boolean lost = r.broker().equals(brokerId.get()) ? !here.contains(r.id())
                : !live.isEmpty() && !live.contains(r.broker());
        return lost || clock.millis() - r.startedAt() > KEEP_MILLIS ? r.withState(OperationRecord.LOST) : r;
    }

    /**
     * Removes finished operations beyond the {@value #KEEP} that finished last, except those that finished in the
     * last {@value #FOLLOW_MILLIS} ms (a caller may be following one to its end), and every operation older than a
     * day; then result chunks whose record is gone (its removal by an older version, say).
     */
    private void prune() {
        long now = clock.millis();
        all().thenApply(ops -> {
            List<OperationRecord> byFinish = new ArrayList<>(ops);
            byFinish.sort(Comparator.comparingLong((OperationRecord o) -> o.finishedAt() == null ? Long.MAX_VALUE
                    : o.finishedAt()).reversed());
            int kept = 0;
            Set<String> left = new java.util.HashSet<>();
            for (OperationRecord o : byFinish) {
                boolean old = now - o.startedAt() > KEEP_MILLIS;
                boolean keep = !old && (o.running() || now - o.finishedAt() < FOLLOW_MILLIS || kept < KEEP);
                if (keep) {
                    kept += o.running() ? 0 : 1;
                    left.add(o.id());
                    continue;
                }
                // the result's chunks first, then the record: a record whose removal failed is found by the next
                // prune, chunks without their record by the sweep below
                registry.deleteOperationResult(o.id()).thenCompose(x -> registry.readOperation(o.id()))
                        .thenCompose(v -> v.present()
                        ? registry.delete(registry.paths().operation(o.id()), v.version())
                        : CompletableFuture.completedFuture(null)).exceptionally(e -> {
                            log.debug("operation {} not removed (another broker may have): {}", o.id(), e.toString());
                            return null;
                        });
            }
            return left;
        }).thenCompose(left -> registry.listOperationResultIds().thenAccept(ids -> ids.stream()
                .filter(id -> !left.contains(id)).forEach(id -> registry.readOperation(id).thenCompose(r ->
                        r.present() ? CompletableFuture.completedFuture(null) : registry.deleteOperationResult(id))
                        .exceptionally(e -> {
                            log.debug("result of operation {} not removed: {}", id, e.toString());
                            return null;
                        })))).exceptionally(e -> {
                            log.warn("old operations not pruned: {}", e.toString());
                            return null;
                        });
    }
}
