"""Runs and sessions: queueing text, scheduling turns, run tokens, actions, stop, the outbox."""
