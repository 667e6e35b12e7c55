"""The mesh: nodes, their credentials, the broker between hub and nodes, node sessions."""
