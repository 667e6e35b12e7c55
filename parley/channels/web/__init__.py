"""The built-in ``web`` channel: its conversations and threads are Parley's own rows, read by the
API (and later the web page)."""
