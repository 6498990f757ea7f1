package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/**
 * State of the broker cluster's bookie-cluster switch.
 *
 * @param activeCluster   cluster new ledgers are created on
 * @param epoch           epoch of the latest switch, 0 before the first
 * @param directive       the latest switch, or null
 * @param ranges          the ledger-id range table
 * @param clusters        registered clusters
 * @param brokers         per-broker cutover progress (live brokers)
 * @param cutoverComplete every live broker has applied {@code epoch} and finished its cutover
 * @param pendingBrokers  live brokers not yet done with {@code epoch}
 * @param migration       the migration after switch {@code epoch}, or null before it starts
 * @param relocationEpoch current relocation epoch
 * @param relocationPendingBrokers live brokers that have not yet applied {@code relocationEpoch}
 * @param brokersWithoutRecord live brokers (Pulsar's broker registry) with no record of the plugin: they run
 *                        without it, or are starting; a switch is refused while there are any. Null from brokers
 *                        that do not report them
 * @param tuning          pacing settings changed at run time, or null
 * @param readMode        how ledgers are read: DUAL_READ (each from the cluster that holds it); null from brokers
 *                        that do not report it
 * @param rolledBack      when the latest switch is the switch back of a rollback: the rolled-back migration (its
 *                        issues name the ledgers it could not route back), else null
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record Status(String activeCluster, long epoch, SwitchDirective directive, List<IdRange> ranges,
                     List<BookieCluster> clusters, List<BrokerProgress> brokers, boolean cutoverComplete,
                     List<String> pendingBrokers, Migration migration, long relocationEpoch,
                     List<String> relocationPendingBrokers, List<String> brokersWithoutRecord,
                     Tuning.Stored tuning, String readMode, Migration rolledBack) {

    /** Without rolledBack (kept so that code written against earlier versions still compiles). */
    public Status(String activeCluster, long epoch, SwitchDirective directive, List<IdRange> ranges,
                  List<BookieCluster> clusters, List<BrokerProgress> brokers, boolean cutoverComplete,
                  List<String> pendingBrokers, Migration migration, long relocationEpoch,
                  List<String> relocationPendingBrokers, List<String> brokersWithoutRecord, Tuning.Stored tuning,
                  String readMode) {
        this(activeCluster, epoch, directive, ranges, clusters, brokers, cutoverComplete, pendingBrokers, migration,
                relocationEpoch, relocationPendingBrokers, brokersWithoutRecord, tuning, readMode, null);
    }

    /** Without readMode (kept so that code written against earlier versions still compiles). */
    public Status(String activeCluster, long epoch, SwitchDirective directive, List<IdRange> ranges,
                  List<BookieCluster> clusters, List<BrokerProgress> brokers, boolean cutoverComplete,
                  List<String> pendingBrokers, Migration migration, long relocationEpoch,
                  List<String> relocationPendingBrokers, List<String> brokersWithoutRecord, Tuning.Stored tuning) {
        this(activeCluster, epoch, directive, ranges, clusters, brokers, cutoverComplete, pendingBrokers, migration,
                relocationEpoch, relocationPendingBrokers, brokersWithoutRecord, tuning, null, null);
    }

    /** Without tuning (kept so that code written against earlier versions still compiles). */
    public Status(String activeCluster, long epoch, SwitchDirective directive, List<IdRange> ranges,
                  List<BookieCluster> clusters, List<BrokerProgress> brokers, boolean cutoverComplete,
                  List<String> pendingBrokers, Migration migration, long relocationEpoch,
                  List<String> relocationPendingBrokers, List<String> brokersWithoutRecord) {
        this(activeCluster, epoch, directive, ranges, clusters, brokers, cutoverComplete, pendingBrokers, migration,
                relocationEpoch, relocationPendingBrokers, brokersWithoutRecord, null, null, null);
    }

    /** Without brokersWithoutRecord (kept so that code written against earlier versions still compiles). */
    public Status(String activeCluster, long epoch, SwitchDirective directive, List<IdRange> ranges,
                  List<BookieCluster> clusters, List<BrokerProgress> brokers, boolean cutoverComplete,
                  List<String> pendingBrokers, Migration migration, long relocationEpoch,
                  List<String> relocationPendingBrokers) {
        this(activeCluster, epoch, directive, ranges, clusters, brokers, cutoverComplete, pendingBrokers, migration,
                relocationEpoch, relocationPendingBrokers, null, null, null, null);
    }
}
