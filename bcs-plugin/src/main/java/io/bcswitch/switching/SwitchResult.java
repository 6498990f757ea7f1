package io.bcswitch.switching;

import io.bcswitch.precheck.PrecheckReport;
import io.bcswitch.registry.SwitchDirective;

/** Answer to an accepted switch: the directive written and the precheck it passed. */
public record SwitchResult(SwitchDirective directive, PrecheckReport precheck) {
}
