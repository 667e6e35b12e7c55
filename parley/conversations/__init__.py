"""Topics: person conversations, tasks, agent conversations, node exchanges; who reads them."""
