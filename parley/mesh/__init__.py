"""The mesh: nodes, their join token, the broker between hub and nodes, node sessions."""
