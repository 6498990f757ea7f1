package io.bcswitch.bench;

/** One benchmark: builds what it measures, measures both sides alternately, and says what it found. */
public interface Scenario {

    /** The name {@code run-bench.sh} takes. */
    String name();

    /** What it compares, in one line. */
    String title();

    ScenarioResult run(BenchOptions options) throws Exception;
}
