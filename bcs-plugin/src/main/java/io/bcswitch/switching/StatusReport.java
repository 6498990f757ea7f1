package io.bcswitch.switching;

import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.BootstrapRecord;
import io.bcswitch.registry.BrokerCutoverRecord;
import io.bcswitch.registry.IdRange;
import io.bcswitch.registry.SwitchDirective;
import java.util.List;

/**
 * Everything an operator needs to see the state of the switch.
 *
 * @param activeCluster cluster new ledgers are created on
 * @param epoch         epoch of the latest switch (0: never switched)
 * @param directive     the latest switch directive, or null
 * @param bootstrap     the bootstrap record
 * @param ranges        the ledger-id range table
 * @param clusters      registered clusters
 * @param brokers       per-broker cutover progress (live brokers only)
 * @param cutoverComplete true when every live broker has applied {@code epoch} and finished its cutover
 * @param pendingBrokers  live brokers that have not yet applied {@code epoch} or are still cutting over
 * @param migration       progress of the migration that follows switch {@code epoch}, or null before it starts
 * @param relocationEpoch current relocation epoch (0: nothing was ever relocated)
 * @param relocationPendingBrokers live brokers that have not yet applied {@code relocationEpoch} (PROMOTE
 *                        waits for them after each batch; nothing they may still read is deleted)
 * @param brokersWithoutRecord live brokers (Pulsar's broker registry) with no record of the plugin: they run
 *                        without it, or have not (re)created it yet; a switch is refused while there are any
 * @param tuning          pacing settings changed at run time (null: none; see {@code GET /tuning})
 * @param readMode        how ledgers are read: always {@link ReadMode#DUAL_READ} (each from the cluster that holds it)
 * @param rolledBack      when the latest switch is the switch back of a rollback (the switch before it is ROLLED_BACK):
 *                        that rolled-back migration, whose issues name the ledgers it could not route back; else null
 */
public record StatusReport(String activeCluster, long epoch, SwitchDirective directive, BootstrapRecord bootstrap,
                           List<IdRange> ranges, List<BookieClusterRecord> clusters,
                           List<BrokerCutoverRecord> brokers, boolean cutoverComplete, List<String> pendingBrokers,
                           io.bcswitch.registry.MigrationState migration, long relocationEpoch,
                           List<String> relocationPendingBrokers, List<String> brokersWithoutRecord,
                           io.bcswitch.registry.TuningOverrides tuning, ReadMode readMode,
                           io.bcswitch.registry.MigrationState rolledBack) {
}
