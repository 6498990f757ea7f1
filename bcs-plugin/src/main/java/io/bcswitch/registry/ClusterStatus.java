package io.bcswitch.registry;

/** Lifecycle of a registered bookie cluster. Exactly one cluster is ACTIVE at a time. */
public enum ClusterStatus {
    /** New ledgers are created on this cluster. */
    ACTIVE,
    /** Registered; may own older ledgers that are still read. */
    STANDBY,
    /** Owns nothing the brokers reference any more; kept only until it is unregistered. */
    DEPRECATED
}
