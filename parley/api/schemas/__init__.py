"""Shapes of the HTTP API, one module per concept: requests are validated here, responses are
built from our values."""
