package io.bcswitch.testkit;

import org.apache.bookkeeper.mledger.proto.ManagedCursorInfo;
import org.apache.bookkeeper.mledger.proto.ManagedLedgerInfo;
import org.apache.pulsar.broker.service.schema.SchemaLocator;

/** Managed-ledger, cursor and schema-locator records as the broker stores them on Pulsar 4.1 and later (LightProto; built for 4.2 and 5.0). */
final class LineMetadataRecords {
    private LineMetadataRecords() {
    }

    /** A managed ledger with one closed ledger. */
    static byte[] managedLedger(long ledgerId, long entries, long size, long closedAt) {
        ManagedLedgerInfo info = new ManagedLedgerInfo();
        info.addLedgerInfo().setLedgerId(ledgerId).setEntries(entries).setSize(size).setTimestamp(closedAt);
        return info.toByteArray();
    }

    /** A cursor without a ledger of its own, its position stored in the metadata. */
    static byte[] cursor(long markDeleteLedgerId, long markDeleteEntryId, long lastActive) {
        return new ManagedCursorInfo().setCursorsLedgerId(-1).setMarkDeleteLedgerId(markDeleteLedgerId)
                .setMarkDeleteEntryId(markDeleteEntryId).setLastActive(lastActive).toByteArray();
    }

    /** A schema with one version, stored in entry 0 of {@code ledgerId}. */
    static byte[] schemaLocator(long ledgerId) {
        SchemaLocator locator = new SchemaLocator();
        locator.setInfo().setVersion(0).setHash(new byte[32]).setPosition().setLedgerId(ledgerId).setEntryId(0);
        locator.addIndex().copyFrom(locator.getInfo());
        return locator.toByteArray();
    }
}
