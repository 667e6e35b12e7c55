"""Deliveries: the outbox as a queue with a deliverer per kind. A decision
writes an item in its own transaction; the hub's outbox worker (``hub/outbox.py``) delivers it —
local kinds inside the settling transaction, remote kinds claimed, sent with the item's
idempotency key, then settled — retrying transient failures with backoff, never a final one."""
