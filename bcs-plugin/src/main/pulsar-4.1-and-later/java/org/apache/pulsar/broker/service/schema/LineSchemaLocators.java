package org.apache.pulsar.broker.service.schema;

import io.bcswitch.adapter.SchemaIndex;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Pulsar 4.1 and later (built for 4.2 and 5.0): schema locators are LightProto classes of the broker's schema package. */
public final class LineSchemaLocators {
    private LineSchemaLocators() {
    }

    /** The index in a locator as stored in the metadata store. */
    public static SchemaIndex parse(byte[] data) {
        SchemaLocator locator = new SchemaLocator();
        locator.parseFrom(Unpooled.wrappedBuffer(data), data.length);
        return of(locator);
    }

    /** The index in a locator the schema storage holds. */
    static SchemaIndex of(BookkeeperSchemaStorage.LocatorEntry entry) {
        return of(entry.locator);
    }

    private static SchemaIndex of(SchemaLocator l) {
        List<SchemaIndex.Entry> index = new ArrayList<>(l.getIndexsCount());
        for (int i = 0; i < l.getIndexsCount(); i++) {
            index.add(entry(l.getIndexAt(i)));
        }
        return new SchemaIndex(l.hasInfo() ? Optional.of(entry(l.getInfo())) : Optional.empty(), index);
    }

    private static SchemaIndex.Entry entry(IndexEntry e) {
        return new SchemaIndex.Entry(e.getVersion(), e.getPosition().getLedgerId(), e.getPosition().getEntryId());
    }
}
