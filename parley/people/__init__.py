"""People: owners and members, their tokens, and who may do what."""
