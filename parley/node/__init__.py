"""A node's own runtime: joining the hub, hosting turns, checking brains, its key and the wire
messages between hub and node. It runs where no store is (tests/test_layout.py says so)."""
