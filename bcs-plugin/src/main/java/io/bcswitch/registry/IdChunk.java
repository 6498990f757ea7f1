package io.bcswitch.registry;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/**
 * A bounded slice (at most {@link #MAX_IDS}) of a long list of ledger ids, one metadata node each: the copies a
 * migration made ({@code <configPath>/copies/<switchEpoch>/<chunk>}). Lists that grow with the number of
 * ledgers never live in one node.
 *
 * @param token the highest migration run token ({@link MigrationState#runToken}) that appended to it: a run with a
 *              lower one has lost the migration and is refused (absent in chunks of earlier versions: 0)
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record IdChunk(int formatVersion, List<Long> ids, long token) {
    public static final int FORMAT_VERSION = 1;
    public static final int MAX_IDS = 2000;

    public IdChunk {
        ids = ids == null ? List.of() : List.copyOf(ids);
    }

    /** A chunk no run wrote with a token (token 0). */
    public IdChunk(int formatVersion, List<Long> ids) {
        this(formatVersion, ids, 0);
    }
}
