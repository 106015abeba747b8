"""Contract suites: one per abstraction (session store, event store, bus), run against every backend."""
