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
 * Long operations (cleanup, drain report, deep verify) started with one call that answers 202 and an operation id at
 * once, and polled with {@code GET /operations/{id}}, the way Pulsar's {@code topics offload} / {@code offload-status}
 * work. The operation runs on the broker that was asked; its record, and at its end the status and body the
 * synchronous call would have answered, are kept in the metadata store so that any broker can report it. The newest
 * {@value #KEEP} finished operations of the last day are kept.
 */
public final class Operations {
    private static final Logger log = LoggerFactory.getLogger(Operations.class);
    /** Finished operations kept (each listing reads them all, and a result may be large). */
    static final int KEEP = 20;
    /** Finished operations older than this are removed. */
    static final long KEEP_MILLIS = TimeUnit.DAYS.toMillis(1);
    /**
     * A result larger than this is not kept (metadata store nodes should stay small; ZooKeeper refuses 1 MB): the
     * record says so and how to get it synchronously.
     */
    static final int MAX_RESULT_BYTES = 256 * 1024;

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
        String id = operation + "-" + Long.toString(clock.millis(), 36) + "-"
                + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x100000, 0x1000000));
        OperationRecord started = OperationRecord.started(id, operation, parameters, brokerId.get(), clock.millis());
        return registry.write(registry.paths().operation(id), started, -1).thenApplyAsync(v -> {
            log.info("operation {} started on broker {}: {} {}", id, started.broker(), operation, parameters);
            runningHere.add(id);
            RestResponse accepted = new RestResponse(202, started);
            CompletableFuture<RestResponse> f;
            try {
                f = work.get();
            } catch (RuntimeException e) {
                f = CompletableFuture.completedFuture(ApiErrors.toResponse(e));
            }
            f.exceptionally(ApiErrors::toResponse).thenApply(Operations::keepable)
                    .thenCompose(answer -> registry.update(registry.paths().operation(id), OperationRecord.class,
                            cur -> cur.map(c -> c.finished(answer.status(), (JsonNode) answer.body(), clock.millis()))))
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
            return accepted;
        }, starter);
    }

    /** The answer with its body as JSON, or, when that is too large to keep, a note saying so. */
    private static RestResponse keepable(RestResponse answer) {
        JsonNode body = Json.mapper().valueToTree(answer.body());
        byte[] bytes = Json.write(body);
        if (bytes.length > MAX_RESULT_BYTES) {
            RestResponse note = RestResponse.error(answer.status(), "the result (" + bytes.length + " bytes) is too "
                    + "large to keep; call the operation without async to get it");
            return new RestResponse(answer.status(), Json.mapper().valueToTree(note.body()));
        }
        return new RestResponse(answer.status(), body);
    }

    /** {@code GET /operations/{id}}: the record (404 when unknown). */
    public CompletableFuture<RestResponse> get(String id) {
        return registry.readOperation(id).thenCombine(registry.pulsarLiveBrokers(), (r, live) -> r.present()
                ? RestResponse.ok(view(r.value(), live))
                : RestResponse.error(404, "no operation '" + id + "' (finished operations are kept for a day, the "
                        + "newest " + KEEP + " of them)"));
    }

    /** {@code GET /operations}: every kept operation, newest first, without results. */
    public CompletableFuture<RestResponse> list() {
        return all().thenCombine(registry.pulsarLiveBrokers(), (ops, live) -> {
            List<OperationRecord> out = new ArrayList<>();
            for (OperationRecord o : ops) {
                out.add(view(o, live).withResult(null));
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
     */
    private OperationRecord view(OperationRecord r, Set<String> live) {
        if (!r.running()) {
            return r;
        }
        boolean lost = r.broker().equals(brokerId.get()) ? !runningHere.contains(r.id())
                : !live.isEmpty() && !live.contains(r.broker());
        return lost || clock.millis() - r.startedAt() > KEEP_MILLIS ? r.withState(OperationRecord.LOST) : r;
    }

    /** Removes finished operations beyond the newest {@value #KEEP} or older than a day. */
    private void prune() {
        long now = clock.millis();
        all().thenAccept(ops -> {
            int kept = 0;
            for (OperationRecord o : ops) {
                boolean old = now - o.startedAt() > KEEP_MILLIS;
                if (o.running() && !old) {
                    continue;
                }
                if (!o.running() && !old && kept < KEEP) {
                    kept++;
                    continue;
                }
                registry.readOperation(o.id()).thenCompose(v -> v.present()
                        ? registry.delete(registry.paths().operation(o.id()), v.version())
                        : CompletableFuture.completedFuture(null)).exceptionally(e -> {
                            log.debug("operation {} not removed (another broker may have): {}", o.id(), e.toString());
                            return null;
                        });
            }
        }).exceptionally(e -> {
            log.warn("old operations not pruned: {}", e.toString());
            return null;
        });
    }
}
