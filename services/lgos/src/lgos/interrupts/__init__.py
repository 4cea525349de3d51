"""Durable human-in-the-loop interrupts: ids, checkpoint keys, run leases, persistence, sweep."""
