package io.bcswitch.audit;

import io.bcswitch.registry.LedgerIssue;
import io.bcswitch.registry.MigrationState;

/**
 * Not an invariant, a notice: the ledgers a rollback could not route back (their copy elsewhere was gone, or its
 * cluster was unregistered, retired, or did not answer) stayed home on the rolled-back cluster. Nothing is lost and
 * nothing is wrong, but the operator should know, since that cluster still serves them: each is named while it is
 * still home there (the migration of a later switch moves it, and then it is no longer named).
 */
final class KeptHomesCheck {
    private KeptHomesCheck() {
    }

    static void check(AuditWorld w, Findings found) {
        for (MigrationState s : w.migrations()) {
            for (LedgerIssue i : s.issues()) {
                if (i.result().equals(LedgerIssue.NOT_REVERSED)
                        && w.view().home(i.ledgerId()).map(h -> h.equals(i.cluster())).orElse(false)) {
                    found.notice(new VerifyReport.Notice(LedgerIssue.NOT_REVERSED, i.ledgerId(), i.cluster(),
                            "the rollback of switch epoch " + s.switchEpoch() + " could not route it back: "
                                    + i.detail() + "; it is read there until the migration of a later switch moves it "
                                    + "(retry-migration once that migration has finished)"));
                }
            }
        }
    }
}
