package io.bcswitch.metrics;

import io.bcswitch.registry.RegistryStore;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts, every few seconds, the live brokers of the Pulsar cluster that run without the plugin (for metrics: a
 * scrape never reads the metadata store), and says so in the log when one appears. Such a broker reads every ledger
 * on the one bookie cluster its broker.conf names: once a switch was made, a topic it loads whose last ledger lives
 * on another cluster loses that ledger (Pulsar's managed ledger drops a last ledger its client cannot find), and
 * nothing it writes is routed. The plugin cannot stop it; it can only make it seen at once.
 */
public final class BrokerCensus implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BrokerCensus.class);

    private final RegistryStore registry;
    private final ScheduledExecutorService scheduler;
    private final long periodSeconds;
    private volatile List<String> withoutPlugin = List.of();
    /** The brokers the log last named. */
    private volatile List<String> warned = List.of();
    private volatile ScheduledFuture<?> task;

    public BrokerCensus(RegistryStore registry, ScheduledExecutorService scheduler, long periodSeconds) {
        this.registry = registry;
        this.scheduler = scheduler;
        this.periodSeconds = periodSeconds;
    }

    public synchronized void start() {
        if (task == null) {
            task = scheduler.scheduleWithFixedDelay(this::count, 0, periodSeconds, TimeUnit.SECONDS);
        }
    }

    /** Live brokers without the plugin at the last count. */
    public int withoutPlugin() {
        return withoutPlugin.size();
    }

    private void count() {
        // two listings, names only: every broker counts every few seconds, so nothing per broker is read
        registry.pulsarLiveBrokers().thenCombine(registry.listBrokerIds(), (live, withRecord) ->
                live.stream().filter(b -> !withRecord.contains(b)).toList()).thenAccept(now -> {
            List<String> before = withoutPlugin;
            withoutPlugin = now;
            // a broker that is starting has no record for a moment: said once it still has none a count later
            List<String> staying = now.stream().filter(before::contains).toList();
            if (!staying.isEmpty() && !staying.equals(warned)) {
                registry.readDirective().thenAccept(directive -> log.warn("live broker(s) {} run without the bookie "
                        + "cluster switch plugin{}", staying, directive.present() ? ": after switch epoch="
                        + directive.value().epoch() + " to bookie-cluster=" + directive.value().target() + " such a "
                        + "broker reads every ledger on its broker.conf's cluster and drops a topic's last ledger it "
                        + "cannot find there (what was written to it is lost to the topic); give it the plugin, or "
                        + "stop it" : "; a switch is refused while there are any"));
            } else if (now.isEmpty() && !warned.isEmpty()) {
                log.info("every live broker runs the bookie cluster switch plugin again (was not: {})", warned);
            }
            warned = staying;
        }).exceptionally(e -> {
            log.debug("cannot count the brokers without the plugin now: {}", e.toString());
            return null;
        });
    }

    @Override
    public void close() {
        ScheduledFuture<?> t = task;
        if (t != null) {
            t.cancel(false);
        }
    }
}
