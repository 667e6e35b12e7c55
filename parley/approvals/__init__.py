"""Approvals: a tool call that asks first waits for a person's yes or no."""
