package io.bcswitch.adapter;

import io.bcswitch.migration.RetentionLookup;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.service.TopicPoliciesService;
import org.apache.pulsar.common.naming.SystemTopicNames;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.apache.pulsar.common.policies.data.TopicPolicies;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Retention of a managed ledger's topic, in Pulsar's order of precedence: the topic's own policy (local,
 * then global) when topic-level policies are enabled, else its namespace policy, else the broker default
 * ({@code defaultRetentionTimeInMinutes}). Partitions take the policy of their partitioned topic.
 */
final class NamespaceRetentionLookup implements RetentionLookup {
    private static final Logger log = LoggerFactory.getLogger(NamespaceRetentionLookup.class);

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
        TopicName policyTopic = TopicName.get(topic.getPartitionedTopicName());
        return topicLevel(p, policyTopic).thenCompose(t -> t.isPresent() ? CompletableFuture.completedFuture(t.get())
                : namespaceLevel(p, topic));
    }

    private static CompletableFuture<Optional<Retention>> topicLevel(PulsarService p, TopicName topic) {
        if (!p.getConfiguration().isTopicLevelPoliciesEnabled() || SystemTopicNames.isSystemTopic(topic)) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        TopicPoliciesService service = p.getTopicPoliciesService();
        return service.getTopicPoliciesAsync(topic, TopicPoliciesService.GetType.LOCAL_ONLY)
                .thenCompose(local -> retentionOf(local).isPresent() ? CompletableFuture.completedFuture(local)
                        : service.getTopicPoliciesAsync(topic, TopicPoliciesService.GetType.GLOBAL_ONLY))
                .thenApply(policies -> retentionOf(policies).map(r -> new Retention(r.getRetentionTimeInMinutes(),
                        "topic " + topic)))
                .exceptionally(e -> {
                    // the namespace's policy is still a sound answer; say why the topic's was not read
                    log.warn("topic={}: topic-level retention not readable, using the namespace's: {}", topic,
                            e.toString());
                    return Optional.empty();
                });
    }

    private static Optional<RetentionPolicies> retentionOf(Optional<TopicPolicies> policies) {
        return policies.filter(TopicPolicies::isRetentionSet).map(TopicPolicies::getRetentionPolicies);
    }

    private static CompletableFuture<Retention> namespaceLevel(PulsarService p, TopicName topic) {
        long brokerDefault = p.getConfiguration().getDefaultRetentionTimeInMinutes();
        return p.getPulsarResources().getNamespaceResources().getPoliciesAsync(topic.getNamespaceObject())
                .thenApply(policies -> policies.filter(x -> x.retention_policies != null)
                        .map(x -> new Retention(x.retention_policies.getRetentionTimeInMinutes(),
                                "namespace " + topic.getNamespace()))
                        .orElseGet(() -> new Retention(brokerDefault, "broker default")));
    }
}
