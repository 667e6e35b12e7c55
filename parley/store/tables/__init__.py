"""Table definitions, by concept. The migrations in ``migrations/versions`` create exactly these."""

from __future__ import annotations

from parley.store.tables.a2a import a2a_answers, a2a_clients, a2a_exposures, a2a_push_configs
from parley.store.tables.base import metadata
from parley.store.tables.channels import (
    channel_accounts,
    channel_bindings,
    channel_identities,
    channel_people,
    web_conversations,
    web_messages,
)
from parley.store.tables.deliveries import (
    outbox,
)
from parley.store.tables.federation import (
    a2a_remote_tasks,
    a2a_sent_texts,
    connections,
    exposures,
    invites,
    received_frames,
)
from parley.store.tables.team import (
    agent_changes,
    agent_env,
    agent_memory,
    agent_warnings,
    agents,
    node_credentials,
    nodes,
    people,
    sign_ins,
)
from parley.store.tables.work import (
    AGENT_CONVERSATION_KEY,
    approvals,
    given_inputs,
    hop_counts,
    messages,
    runs,
    sessions,
    tool_calls,
    topics,
)

__all__ = [
    "AGENT_CONVERSATION_KEY",
    "a2a_answers",
    "a2a_clients",
    "a2a_exposures",
    "a2a_push_configs",
    "a2a_remote_tasks",
    "a2a_sent_texts",
    "agent_changes",
    "agent_env",
    "agent_memory",
    "agent_warnings",
    "agents",
    "approvals",
    "channel_accounts",
    "channel_bindings",
    "channel_identities",
    "channel_people",
    "connections",
    "exposures",
    "given_inputs",
    "hop_counts",
    "invites",
    "messages",
    "metadata",
    "node_credentials",
    "nodes",
    "outbox",
    "people",
    "received_frames",
    "runs",
    "sessions",
    "sign_ins",
    "tool_calls",
    "topics",
    "web_conversations",
    "web_messages",
]
