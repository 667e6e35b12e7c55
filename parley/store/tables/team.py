"""People, the nodes they run agents on, and the agents with what belongs to each."""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Column,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)

from parley.store.tables.base import metadata, partial_index
from parley.store.types import UTCDateTime

people = Table(
    "people",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("role", String(16), nullable=False),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("created_at", UTCDateTime, nullable=False),
    CheckConstraint("role IN ('owner', 'member')", name="role"),
)

# A sign-in to the web page, one per cookie given out: signing out deletes it, and so does
# reissuing its person's token. The cookie carries a random secret; only its hash is kept.
sign_ins = Table(
    "sign_ins",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("secret_hash", String(64), nullable=False, unique=True),
    Column("person_id", Integer, ForeignKey("people.id", ondelete="CASCADE"), nullable=False),
    Column("signed_in_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    Index("ix_sign_ins_person_id", "person_id"),
)

nodes = Table(
    "nodes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("hostname", String(255), nullable=False),
    Column("workspace_root", Text, nullable=False),
    Column("engram", Text, nullable=False, server_default=""),
    Column("joined_at", UTCDateTime, nullable=False),
    Column("last_seen_at", UTCDateTime, nullable=False),
    # Exactly one node session per node, as a constraint: the node points at its session (so it
    # cannot be absent) and the pair (session, node) must be that agent's own (id, node_id), so
    # the session cannot be moved to another node nor deleted. Deferred, because node and
    # session are created together in one transaction.
    Column("session_agent_id", Integer, nullable=False, unique=True),
    ForeignKeyConstraint(
        ["session_agent_id", "id"],
        ["agents.id", "agents.node_id"],
        name="fk_nodes_session_agent",
        deferrable=True,
        initially="DEFERRED",
        use_alter=True,
    ),
)

# The broker credentials issued to each node name (only their public key is kept: the private
# part went to the owner once). A name has at most one live key: its registrations must be
# signed by it. Revoked keys stay, for the broker's revocation list.
node_credentials = Table(
    "node_credentials",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("node", String(64), nullable=False),
    Column("public_key", String(64), nullable=False, unique=True),
    Column("issued_at", UTCDateTime, nullable=False),
    Column("revoked_at", UTCDateTime, nullable=True),
    partial_index(
        "ux_node_credentials_live",
        "node",
        unique=True,
        where="revoked_at IS NULL",
    ),
)

agents = Table(
    "agents",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("kind", String(8), nullable=False),
    Column("node_id", Integer, ForeignKey("nodes.id"), nullable=False),
    Column("lifecycle", String(16), nullable=False),
    Column("modality", String(8), nullable=False, server_default="ai"),
    Column("human_person_id", Integer, ForeignKey("people.id"), nullable=True),
    Column("engram", Text, nullable=False, server_default=""),
    Column("brain", Text, nullable=False),
    Column("max_sessions", Integer, nullable=False),
    Column("is_template", Boolean, nullable=False, server_default=text("false")),
    Column("surge_threshold", Integer, nullable=True),
    Column("clone_lifetime_seconds", Integer, nullable=True),
    Column("template_id", Integer, ForeignKey("agents.id"), nullable=True),
    Column("expires_at", UTCDateTime, nullable=True),
    Column("workspace", Text, nullable=True),
    # Its workspace tools, comma-separated in the table's order (agents/tools.py).
    Column("tools", Text, nullable=False, server_default="read,list,find"),
    # Its own MCP servers, as JSON (agents/mcp.py).
    Column("mcp_servers", Text, nullable=False, server_default="[]"),
    # Which of its tools wait for a person's approval before each call (agents/tools.py).
    Column("ask", Text, nullable=False, server_default="run"),
    Column("retired_reason", Text, nullable=True),
    Column("retired_at", UTCDateTime, nullable=True),
    Column("hired_by_person_id", Integer, ForeignKey("people.id"), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("id", "node_id", name="uq_agents_id_node"),
    CheckConstraint(
        "(kind = 'node' AND lifecycle = 'inherent' AND NOT is_template AND template_id IS NULL)"
        " OR (kind = 'agent' AND lifecycle IN ('hired', 'active', 'draining', 'retired'))",
        name="kind_lifecycle",
    ),
    CheckConstraint("max_sessions >= 1", name="max_sessions"),
    CheckConstraint("modality IN ('ai', 'human')", name="modality"),
    CheckConstraint("modality = 'ai' OR human_person_id IS NOT NULL", name="human_has_person"),
    CheckConstraint("is_template OR surge_threshold IS NULL", name="surge_only_templates"),
    partial_index(
        "uq_agents_one_session_per_node",
        "node_id",
        unique=True,
        where="kind = 'node'",
    ),
    Index("ix_agents_lifecycle", "lifecycle"),
)

agent_memory = Table(
    "agent_memory",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("agent_id", Integer, ForeignKey("agents.id"), nullable=False),
    Column("note", Text, nullable=False),
    Column("written_by_person_id", Integer, ForeignKey("people.id"), nullable=True),
    # A note a run wrote: which one (its topic says where it was working). None: a person's.
    Column("run_id", Integer, ForeignKey("runs.id"), nullable=True),
    Column("written_at", UTCDateTime, nullable=False),
    Index("ix_agent_memory_agent", "agent_id", "id"),  # an agent's memory, newest first
)

agent_warnings = Table(
    "agent_warnings",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("agent_id", Integer, ForeignKey("agents.id"), nullable=False),
    Column("reason", Text, nullable=False),
    Column("given_by_person_id", Integer, ForeignKey("people.id"), nullable=True),
    Column("given_at", UTCDateTime, nullable=False),
    Index("ix_agent_warnings_agent", "agent_id", "id"),
)

# What an owner changed of a hired agent (``agent set``), one row per setting: its old and new
# value (variables by name only, never by value), who changed it and when.
agent_changes = Table(
    "agent_changes",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("agent_id", Integer, ForeignKey("agents.id"), nullable=False),
    Column("setting", String(32), nullable=False),
    Column("old", Text, nullable=True),
    Column("new", Text, nullable=True),
    Column("changed_by_person_id", Integer, ForeignKey("people.id"), nullable=True),
    Column("changed_at", UTCDateTime, nullable=False),
    Index("ix_agent_changes_agent", "agent_id", "id"),
)

# Variables an owner declared for an agent's command brain: a value, or (from_server) a name
# whose value the node's environment gives at each turn. Shown by name only, never by value.
agent_env = Table(
    "agent_env",
    metadata,
    Column("agent_id", Integer, ForeignKey("agents.id"), primary_key=True),
    Column("name", String(128), primary_key=True),
    Column("value", Text, nullable=True),
    Column("from_server", Boolean, nullable=False),
    CheckConstraint("from_server = (value IS NULL)", name="value_or_from_server"),
)
