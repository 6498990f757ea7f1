package io.bcswitch.adapter;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Where a schema's versions are stored, read from its locator in the broker's metadata: the latest version and the
 * index of all of them. The same on every Pulsar line (the locator's own classes are not: protobuf on 4.0, LightProto
 * from 4.1 on).
 */
public record SchemaIndex(Optional<Entry> latest, List<Entry> index) {
    /** One stored version: the ledger and entry that hold its payload. */
    public record Entry(long version, long ledgerId, long entryId) {
    }

    /** Where {@code version} is: the latest entry or one of the index entries. */
    public Optional<Entry> find(long version) {
        if (latest.isPresent() && latest.get().version() == version) {
            return latest;
        }
        return index.stream().filter(e -> e.version() == version).findFirst();
    }

    /** Every ledger the schema's versions are stored in. */
    public Set<Long> ledgerIds() {
        Set<Long> ids = new TreeSet<>();
        latest.ifPresent(e -> ids.add(e.ledgerId()));
        index.forEach(e -> ids.add(e.ledgerId()));
        return ids;
    }
}
