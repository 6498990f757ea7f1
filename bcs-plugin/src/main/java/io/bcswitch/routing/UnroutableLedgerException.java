package io.bcswitch.routing;

import org.apache.bookkeeper.client.api.BKException;

/**
 * No registered cluster owns a ledger id, or the owner's client cannot be built. Carries a message an
 * operator can act on; BookKeeper callbacks only carry {@link #getCode()}, so the router also logs it.
 */
public class UnroutableLedgerException extends BKException {
    private final String detail;

    public UnroutableLedgerException(int code, String detail) {
        super(code);
        this.detail = detail;
    }

    @Override
    public String getMessage() {
        return detail;
    }
}
