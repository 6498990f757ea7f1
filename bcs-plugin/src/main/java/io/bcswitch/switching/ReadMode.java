package io.bcswitch.switching;

import io.bcswitch.registry.RegistryException;
import java.util.Arrays;
import java.util.Locale;

/**
 * PIP-477's read modes, as this plugin honours them. Routing is by ownership: every ledger id has exactly one home
 * (its id range, or a relocation once a copy is promoted), so every ledger is always read from the one cluster that
 * holds it. That is the PIP's {@code DUAL_READ}, and it is the only mode there is; the two others would make
 * ledgers unreadable, and what an operator wants from them is done by other means, which the refusal names.
 */
public enum ReadMode {
    /** Each ledger is read from the cluster that holds it: old ledgers from the old cluster, new from the new. */
    DUAL_READ(null),
    /** Refused: reading only the old cluster would lose every ledger written since the switch. */
    OLD_CLUSTER_ONLY("reading only the old cluster would make every ledger written since the switch unreadable; "
            + "to go back to the old cluster use 'rollback' (inside the rollback window) or 'switch' to it"),
    /** Refused: reading only the new cluster would lose every ledger still on the old one. */
    NEW_CLUSTER_ONLY("reading only the new cluster would make every ledger still on the old cluster unreadable; "
            + "the migration copies what must move, 'drain-report' shows what still reads the old cluster, and "
            + "'cleanup' and 'close-client' retire it once nothing does");

    private final String refusal;

    ReadMode(String refusal) {
        this.refusal = refusal;
    }

    /** The mode every broker reads with. */
    public static final ReadMode CURRENT = DUAL_READ;

    /** What a request to set read mode {@code mode} answers: the mode, or a refusal (400 unknown, 409 refused). */
    public static ReadMode set(String mode) {
        ReadMode m = Arrays.stream(values()).filter(v -> v.name().equals(String.valueOf(mode)
                .trim().toUpperCase(Locale.ROOT))).findFirst().orElseThrow(() -> RegistryException.invalid(
                        "unknown read mode '" + mode + "' (read modes: DUAL_READ, OLD_CLUSTER_ONLY, NEW_CLUSTER_ONLY)"));
        if (m.refusal != null) {
            throw RegistryException.conflict("read mode " + m + " is not supported: every ledger is read from the one "
                    + "cluster that holds it (DUAL_READ, always); " + m.refusal);
        }
        return m;
    }
}
