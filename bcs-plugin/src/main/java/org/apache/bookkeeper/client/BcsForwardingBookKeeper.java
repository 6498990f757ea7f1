package org.apache.bookkeeper.client;

/**
 * Base of the plugin's routing client. {@link BookKeeper}'s public constructors each connect to one
 * real cluster; a client that only forwards to other clients needs the unconnected constructor, which
 * BookKeeper keeps package-private (for subclassing in tests). This class only exposes it; it adds no
 * behaviour and overrides nothing. Every method the routing client does not override would act on
 * this unconnected base, so the subclass must override each method callers use.
 */
public abstract class BcsForwardingBookKeeper extends BookKeeper {
    protected BcsForwardingBookKeeper() {
        super();
    }
}
