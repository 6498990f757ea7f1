package io.bcswitch.testkit;

import com.google.protobuf.ByteString;
import org.apache.bookkeeper.mledger.proto.MLDataFormats.ManagedCursorInfo;
import org.apache.bookkeeper.mledger.proto.MLDataFormats.ManagedLedgerInfo;
import org.apache.pulsar.broker.service.schema.SchemaStorageFormat.IndexEntry;
import org.apache.pulsar.broker.service.schema.SchemaStorageFormat.PositionInfo;
import org.apache.pulsar.broker.service.schema.SchemaStorageFormat.SchemaLocator;

/** Managed-ledger, cursor and schema-locator records as the broker stores them on Pulsar 4.0 (protobuf). */
final class LineMetadataRecords {
    private LineMetadataRecords() {
    }

    /** A managed ledger with one closed ledger. */
    static byte[] managedLedger(long ledgerId, long entries, long size, long closedAt) {
        return ManagedLedgerInfo.newBuilder().addLedgerInfo(ManagedLedgerInfo.LedgerInfo.newBuilder()
                .setLedgerId(ledgerId).setEntries(entries).setSize(size).setTimestamp(closedAt)).build().toByteArray();
    }

    /** A cursor without a ledger of its own, its position stored in the metadata. */
    static byte[] cursor(long markDeleteLedgerId, long markDeleteEntryId, long lastActive) {
        return ManagedCursorInfo.newBuilder().setCursorsLedgerId(-1).setMarkDeleteLedgerId(markDeleteLedgerId)
                .setMarkDeleteEntryId(markDeleteEntryId).setLastActive(lastActive).build().toByteArray();
    }

    /** A schema with one version, stored in entry 0 of {@code ledgerId}. */
    static byte[] schemaLocator(long ledgerId) {
        IndexEntry only = IndexEntry.newBuilder().setVersion(0).setHash(ByteString.copyFrom(new byte[32]))
                .setPosition(PositionInfo.newBuilder().setLedgerId(ledgerId).setEntryId(0)).build();
        return SchemaLocator.newBuilder().setInfo(only).addIndex(only).build().toByteArray();
    }
}
