"""Runs and sessions: their records, queueing text for a session, run tokens, stop, recovery."""
