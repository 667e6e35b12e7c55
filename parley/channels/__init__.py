"""Channels: the places people talk (``web`` built in, Discord and others as adapters), the
bindings of a channel conversation to a session, and the router that picks where a completion
goes. Channel specifics stay in adapters; everything here is channel-agnostic."""
