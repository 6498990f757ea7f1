package io.bcswitch.adapter;

import io.bcswitch.migration.RetentionLookup;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.common.naming.TopicName;

/**
 * Retention of a managed ledger's topic from its namespace policy, else the broker defaults
 * ({@code defaultRetentionTimeInMinutes}). Topic-level retention policies are not consulted.
 */
final class NamespaceRetentionLookup implements RetentionLookup {
    private final Supplier<PulsarService> pulsar;

    NamespaceRetentionLookup(Supplier<PulsarService> pulsar) {
        this.pulsar = pulsar;
    }

    @Override
    public CompletableFuture<Retention> retention(String managedLedger) {
        PulsarService p = pulsar.get();
        if (p == null) {
            return CompletableFuture.completedFuture(new Retention(-1, "broker not started"));
        }
        TopicName topic;
        try {
            topic = TopicName.get(TopicName.fromPersistenceNamingEncoding(managedLedger));
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(new Retention(-1, "not a topic's managed ledger"));
        }
        long brokerDefault = p.getConfiguration().getDefaultRetentionTimeInMinutes();
        return p.getPulsarResources().getNamespaceResources().getPoliciesAsync(topic.getNamespaceObject())
                .thenApply(policies -> policies.filter(x -> x.retention_policies != null)
                        .map(x -> new Retention(x.retention_policies.getRetentionTimeInMinutes(),
                                "namespace " + topic.getNamespace()))
                        .orElseGet(() -> new Retention(brokerDefault, "broker default")));
    }
}
