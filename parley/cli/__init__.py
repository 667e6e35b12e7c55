"""The command line: thin commands over the HTTP API (only ``serve`` runs the service itself)."""
