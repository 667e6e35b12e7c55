"""The hub's bookkeeping of its nodes: who they are, their credentials, registrations, who holds
a name, who is alive; and the hub's set-up of the mesh's broker (keys, configuration)."""
