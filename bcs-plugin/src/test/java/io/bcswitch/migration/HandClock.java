package io.bcswitch.migration;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock a test moves by hand, from {@code startMillis}: what the orchestrator does at an exact moment. */
final class HandClock extends Clock {
    private final AtomicLong millis;

    HandClock(long startMillis) {
        this.millis = new AtomicLong(startMillis);
    }

    void advance(long by) {
        millis.addAndGet(by);
    }

    @Override
    public long millis() {
        return millis.get();
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}
