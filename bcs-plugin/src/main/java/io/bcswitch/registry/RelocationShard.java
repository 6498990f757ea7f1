package io.bcswitch.registry;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.Map;
import java.util.TreeMap;

/**
 * The relocations of one shard of ledger ids, at {@code <configPath>/relocations/s<NNNN>}: ids are spread over
 * {@link RegistryPaths#RELOCATION_SHARDS} shards by {@code id mod shards}, so that no metadata node grows with
 * the number of relocated ledgers faster than 1/{@value RegistryPaths#RELOCATION_SHARDS} of it (150,000
 * relocations are about 150 per node), and a full read of the table is one read per shard, not per ledger.
 * Written with a version-checked update per shard.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record RelocationShard(int formatVersion, Map<Long, Relocation> relocations) {
    public static final int FORMAT_VERSION = 1;

    public RelocationShard {
        relocations = relocations == null ? Map.of() : java.util.Collections.unmodifiableMap(new TreeMap<>(relocations));
    }

    public static RelocationShard empty() {
        return new RelocationShard(FORMAT_VERSION, Map.of());
    }
}
