"""The HTTP API under /api/v1: the one edge every other client (CLI, web) goes through."""
