package org.apache.pulsar.broker.service.schema;

import io.bcswitch.adapter.SchemaIndex;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.pulsar.broker.service.schema.SchemaStorageFormat.IndexEntry;
import org.apache.pulsar.broker.service.schema.SchemaStorageFormat.SchemaLocator;

/** Pulsar 4.0: schema locators are protobuf classes ({@code SchemaStorageFormat}). */
public final class LineSchemaLocators {
    private LineSchemaLocators() {
    }

    /** The index in a locator as stored in the metadata store. */
    public static SchemaIndex parse(byte[] data) {
        try {
            return of(SchemaLocator.parseFrom(data));
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new IllegalArgumentException("not a schema locator: " + e.getMessage(), e);
        }
    }

    /** The index in a locator the schema storage holds. */
    static SchemaIndex of(BookkeeperSchemaStorage.LocatorEntry entry) {
        return of(entry.locator);
    }

    private static SchemaIndex of(SchemaLocator l) {
        List<SchemaIndex.Entry> index = new ArrayList<>(l.getIndexCount());
        for (IndexEntry e : l.getIndexList()) {
            index.add(entry(e));
        }
        return new SchemaIndex(l.hasInfo() ? Optional.of(entry(l.getInfo())) : Optional.empty(), index);
    }

    private static SchemaIndex.Entry entry(IndexEntry e) {
        return new SchemaIndex.Entry(e.getVersion(), e.getPosition().getLedgerId(), e.getPosition().getEntryId());
    }
}
