package io.bcswitch.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** An accepted switch: the directive written and the precheck it passed. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record SwitchOutcome(SwitchDirective directive, Precheck precheck) {
}
