"""Running graphs: stream consumption, parity, usage, statuses, failure translation."""
