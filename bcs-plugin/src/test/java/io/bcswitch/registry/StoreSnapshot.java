package io.bcswitch.registry;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.pulsar.metadata.api.GetResult;
import org.apache.pulsar.metadata.api.MetadataStore;
import org.apache.pulsar.metadata.impl.AbstractMetadataStore;

/** Every node of a metadata store (path -> version and data): equal snapshots prove a refused call changed nothing. */
public final class StoreSnapshot {
    private StoreSnapshot() {
    }

    public static Map<String, String> of(MetadataStore store) throws Exception {
        if (store instanceof AbstractMetadataStore cached) {
            // children are listed from a cache that learns of a parent created on the way to a new node only when
            // its notification arrives: read from the store itself
            cached.invalidateAll();
        }
        Map<String, String> out = new TreeMap<>();
        List<String> todo = new ArrayList<>(List.of("/"));
        while (!todo.isEmpty()) {
            String p = todo.remove(todo.size() - 1);
            Optional<GetResult> r = store.get(p).get();
            out.put(p, r.map(g -> g.getStat().getVersion() + ":" + new String(g.getValue(), StandardCharsets.UTF_8))
                    .orElse("<no node>"));
            for (String c : store.getChildren(p).get()) {
                todo.add(p.equals("/") ? "/" + c : p + "/" + c);
            }
        }
        return out;
    }
}
