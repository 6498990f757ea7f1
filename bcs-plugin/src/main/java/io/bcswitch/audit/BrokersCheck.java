package io.bcswitch.audit;

import io.bcswitch.audit.VerifyReport.Violation;

/**
 * Invariant 4: every live broker follows the current switch and routes with the current relocation table (a broker
 * behind either may read a ledger where it no longer is).
 */
final class BrokersCheck {
    void check(AuditWorld w, Findings found) {
        long epoch = w.view().switchEpoch();
        for (String b : w.brokers().notFollowing(epoch)) {
            found.violation(new Violation("BROKER_NOT_FOLLOWING", null, b, null, "live broker does not follow switch "
                    + "epoch " + epoch));
        }
        for (String b : w.brokers().relocationPending(w.view().relocationEpoch())) {
            found.violation(new Violation("BROKER_ROUTES_OLD_RELOCATIONS", null, b, null, "live broker has not "
                    + "applied relocation epoch " + w.view().relocationEpoch()));
        }
    }
}
