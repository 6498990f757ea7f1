package io.bcswitch.adapter;

import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.common.naming.TopicName;

/**
 * The broker the plugin runs in, as far as the storage plugin can know it: the {@link PulsarService} arrives late
 * (through the servlet, after the storage is initialised), and the broker id later still.
 */
final class BoundBroker {
    private final String fallbackBrokerId = "broker-" + UUID.randomUUID().toString().substring(0, 8);
    private volatile PulsarService pulsar;

    /** Binds the broker; true the first time. */
    boolean bind(PulsarService pulsarService) {
        boolean first = pulsar == null;
        pulsar = pulsarService;
        return first;
    }

    /** The broker, or null before it is bound. */
    PulsarService pulsar() {
        return pulsar;
    }

    /** The broker id once the broker has one (it is set late in broker start-up), else a stand-in. */
    String brokerId() {
        PulsarService p = pulsar;
        if (p != null) {
            try {
                String id = p.getBrokerId();
                if (id != null) {
                    return id;
                }
            } catch (RuntimeException e) {
                // not started yet
            }
        }
        return fallbackBrokerId;
    }

    /** The broker id, or null while the broker has none yet. */
    String knownBrokerId() {
        String id = brokerId();
        return id.equals(fallbackBrokerId) ? null : id;
    }

    /** The compacted ledger the topic of managed ledger {@code ml} uses now, as its owning broker knows it. */
    CompletableFuture<Optional<Long>> compactedLedgerOf(String ml) {
        PulsarService p = pulsar;
        if (p == null) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        try {
            String topic = TopicName.fromPersistenceNamingEncoding(ml);
            return p.getAdminClient().topics().getInternalStatsAsync(topic).thenApply(st ->
                    st.compactedLedger == null || st.compactedLedger.ledgerId < 0 ? Optional.<Long>empty()
                            : Optional.of(st.compactedLedger.ledgerId)).exceptionally(e -> {
                                Throwable c = e instanceof CompletionException && e.getCause() != null
                                        ? e.getCause() : e;
                                if (c instanceof PulsarAdminException.NotFoundException) {
                                    return Optional.empty(); // the topic is gone
                                }
                                throw new CompletionException(c);
                            });
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
