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

    public String brokers() {
        return root + "/brokers";
    }

    public String broker(String brokerId) {
        return brokers() + "/" + brokerId;
    }

    /** One node per relocated ledger: {@code <root>/relocations/<ledgerId>}. */
    public String relocations() {
        return root + "/relocations";
    }

    public String relocation(long ledgerId) {
        return relocations() + "/" + ledgerId;
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
