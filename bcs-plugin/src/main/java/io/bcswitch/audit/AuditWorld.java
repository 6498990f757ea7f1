package io.bcswitch.audit;

import io.bcswitch.inventory.LedgerInventory;
import io.bcswitch.inventory.LedgerReference;
import io.bcswitch.registry.BookieClusterRecord;
import io.bcswitch.registry.BrokerView;
import io.bcswitch.registry.MigrationState;
import io.bcswitch.registry.RegistryView;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What an audit read once and checks every invariant against, so that all the checks judge the same moment.
 *
 * @param unknown the managed ledgers of compacted topics whose ledger in use could not be learnt (see
 *                {@link LedgerInventory#picture()})
 * @param ledgers the ledger ids each bookie cluster holds (a cluster that could not be listed is absent)
 * @param listedForDeletion per bookie cluster, the copies still on a deletion list there (a rolled-back switch's,
 *                          a superseded migration's): the migration's passes decide about each of them
 */
record AuditWorld(RegistryView view, List<LedgerReference> refs, Set<String> unknown,
                  List<BookieClusterRecord> clusters, Map<String, List<Long>> ledgers, BrokerView brokers,
                  List<MigrationState> migrations, Map<String, Set<Long>> listedForDeletion) {
}
