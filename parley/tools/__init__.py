"""An agent's workspace tools: the file and command tools a model brain calls, confined to the
agent's workspace folder (``workspace.WorkspaceTools``)."""
