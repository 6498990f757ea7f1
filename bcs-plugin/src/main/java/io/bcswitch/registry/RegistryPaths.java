package io.bcswitch.registry;

/** Where each piece of registry state lives under the configured root. */
public record RegistryPaths(String root) {

    public RegistryPaths {
        if (root == null || !root.startsWith("/") || root.length() < 2 || root.endsWith("/")) {
            throw new IllegalArgumentException("configPath must be an absolute path without a trailing '/': " + root);
        }
        for (String seg : root.substring(1).split("/", -1)) {
            if (seg.isEmpty() || seg.equals(".") || seg.equals("..")) {
                throw new IllegalArgumentException("configPath must not contain empty, '.' or '..' segments: " + root);
            }
        }
    }

    public String clusters() {
        return root + "/clusters";
    }

    public String cluster(String name) {
        return clusters() + "/" + name;
    }

    public String ranges() {
        return root + "/ranges";
    }

    public String bootstrap() {
        return root + "/bootstrap";
    }

    public String switchTarget() {
        return root + "/switch-target";
    }

    /** The switch about to be committed (see {@link SwitchPreparation}). */
    public String switchPrepare() {
        return root + "/switch-prepare";
    }

    /** Pacing settings changed at run time (see {@link TuningOverrides}). */
    public String tuning() {
        return root + "/tuning";
    }

    /** Long operations started asynchronously (see {@link OperationRecord}). */
    public String operations() {
        return root + "/operations";
    }

    public String operation(String id) {
        return operations() + "/" + id;
    }

    /** The chunks of an operation's result too large for its record (see {@link OperationRecord#resultChunks}). */
    public String operationResult(String id) {
        return operationResults() + "/" + id;
    }

    public String operationResults() {
        return root + "/operation-results";
    }

    public String brokers() {
        return root + "/brokers";
    }

    public String broker(String brokerId) {
        return brokers() + "/" + brokerId;
    }

    /** Shards of ids the relocation table is split into (fixed: it is part of the persisted layout). */
    public static final int RELOCATION_SHARDS = 1024;

    /**
     * The relocation table: {@code <root>/relocations/s<NNNN>/<ledgerId>}, one node per relocated ledger, in
     * {@value #RELOCATION_SHARDS} shard directories by {@code ledgerId mod shards}, so that no listing grows past
     * 1/{@value #RELOCATION_SHARDS} of the table (150,000 relocations: about 150 per directory). Nodes
     * {@code <root>/relocations/<ledgerId>} are the layout of earlier versions; they are still read, and replaced by
     * the shard node when the ledger's relocation next changes.
     */
    public String relocations() {
        return root + "/relocations";
    }

    public String relocationShard(long ledgerId) {
        return relocations() + "/" + shardName(Math.floorMod(ledgerId, RELOCATION_SHARDS));
    }

    public String relocation(long ledgerId) {
        return relocationShard(ledgerId) + "/" + ledgerId;
    }

    /** Shard node name: {@code s0000}..{@code s1023} (never a number, so never a legacy per-ledger node). */
    public static String shardName(int shard) {
        return String.format("s%04d", shard);
    }

    /** Earlier versions' one-node-per-ledger relocation. */
    public String legacyRelocation(long ledgerId) {
        return relocations() + "/" + ledgerId;
    }

    /** Highest ids each cluster was seen to issue. */
    public String idWatermark(String cluster) {
        return root + "/id-watermarks/" + cluster;
    }

    /** Ids of the copies the migration after switch {@code epoch} made, in {@link IdChunk}s. */
    public String copies(long epoch) {
        return copiesRoot() + "/" + epoch;
    }

    public String copiesRoot() {
        return root + "/copies";
    }

    public String copiesChunk(long epoch, int chunk) {
        return copies(epoch) + "/" + String.format("%06d", chunk);
    }

    /** Bumped after every change of the relocation table; brokers watch it. */
    public String relocationEpoch() {
        return root + "/relocation-epoch";
    }

    /** Ephemeral, per live broker: the relocation epoch it routes with. */
    public String relocationApplied() {
        return root + "/relocation-applied";
    }

    public String relocationApplied(String brokerId) {
        return relocationApplied() + "/" + brokerId;
    }

    /** Progress of the migration that followed switch {@code epoch}. */
    public String orchestrator(long epoch) {
        return root + "/orchestrator/" + epoch;
    }

    public String orchestrators() {
        return root + "/orchestrator";
    }

    /** Ephemeral: held by the one broker running the orchestrator. */
    public String orchestratorLock() {
        return root + "/orchestrator-lock";
    }
}
