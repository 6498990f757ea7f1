package io.bcswitch.registry;

/**
 * The pacing settings an operator changed at run time ({@code <configPath>/tuning}); each broker applies them over
 * its broker.conf values within seconds. A null field means "broker.conf's value".
 *
 * @param migrationBytesPerSecond copy rate bound of the migration, 0 for none
 * @param migrationConcurrency    ledgers the migration copies at the same time
 * @param cutoverTopicsPerSecond  topics per second each broker rolls onto the new cluster after a switch
 * @param updatedAt               epoch millis of the last change
 */
public record TuningOverrides(int formatVersion, Long migrationBytesPerSecond, Integer migrationConcurrency,
                              Double cutoverTopicsPerSecond, long updatedAt) {
    public static final int FORMAT_VERSION = 1;
    public static final TuningOverrides NONE = new TuningOverrides(FORMAT_VERSION, null, null, null, 0);
}
