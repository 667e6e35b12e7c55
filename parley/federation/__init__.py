"""Federation: connections to peer installations (invites, the handshake, which agents each
side exposes) and the wire between them (frames in batches, a verdict each, per-thread order)."""
