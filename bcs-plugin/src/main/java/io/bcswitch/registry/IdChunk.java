package io.bcswitch.registry;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/**
 * A bounded slice (at most {@link #MAX_IDS}) of a long list of ledger ids, one metadata node each: the copies a
 * migration made ({@code <configPath>/copies/<switchEpoch>/<chunk>}). Lists that grow with the number of
 * ledgers never live in one node.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record IdChunk(int formatVersion, List<Long> ids) {
    public static final int FORMAT_VERSION = 1;
    public static final int MAX_IDS = 2000;

    public IdChunk {
        ids = ids == null ? List.of() : List.copyOf(ids);
    }
}
