"""The broker between the hub and its nodes: the port every broker fills, the in-process one
and NATS JetStream, durable consumers and their batches."""
