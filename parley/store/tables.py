"""Table definitions. The migrations in ``migrations/versions`` create exactly these."""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Column,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)

from parley.store.types import UTCDateTime

metadata = MetaData()

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
    Index(
        "uq_agents_one_session_per_node",
        "node_id",
        unique=True,
        sqlite_where=text("kind = 'node'"),
        postgresql_where=text("kind = 'node'"),
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

# An agent conversation's key and parties: both roles here (connection 'local'), or one here and
# the peer's by name; a local one always has a root, a peer's may be its own (set just after it
# is inserted, when its id is known).
AGENT_CONVERSATION_KEY = (
    "kind <> 'agent_conversation' OR (connection IS NOT NULL AND thread_id IS NOT NULL"
    " AND pair_key IS NOT NULL AND ((connection = 'local' AND root_topic_id IS NOT NULL"
    " AND sender_agent_id IS NOT NULL AND peer_role IS NULL) OR (connection <> 'local'"
    " AND sender_agent_id IS NULL AND peer_role IS NOT NULL)))"
)

# A topic is what runs work on: a person's conversation with an agent, a task, an agent
# conversation, or a node's own exchange. One table, so that runs, sessions and messages point at
# any kind the same way; the kind-specific columns are checked below.
topics = Table(
    "topics",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("kind", String(24), nullable=False),
    # The agent whose session works in it (for an agent conversation: the role first written to).
    Column("agent_id", Integer, ForeignKey("agents.id"), nullable=False),
    # The name work was addressed to (a template's clone works for the template's name).
    Column("addressed_agent_id", Integer, ForeignKey("agents.id"), nullable=True),
    # A conversation's person; a task's creator (none for a subtask).
    Column("person_id", Integer, ForeignKey("people.id"), nullable=True),
    Column("text", Text, nullable=True),
    Column("status", String(16), nullable=False, server_default="open"),
    Column("result", Text, nullable=True),
    # A subtask: the run that spawned it, and the session its completion is delivered to.
    Column("spawned_by_run_id", Integer, nullable=True),
    Column("reply_agent_id", Integer, ForeignKey("agents.id"), nullable=True),
    Column("reply_topic_id", Integer, ForeignKey("topics.id"), nullable=True),
    Column("thread", Boolean, nullable=False, server_default=text("false")),
    # An agent conversation: (connection, root, roles) is its key, thread_id its name on the wire
    # (unique per connection: a peer names its threads itself). Its roles are parties: with
    # connection 'local' both are agents here (agent_id, sender_agent_id); with a peer's
    # connection, agent_id is the role here and peer_role the peer's role, by name. A
    # conversation the peer started is its own root (root_topic_id = id).
    Column("connection", String(64), nullable=True),
    Column("root_topic_id", Integer, ForeignKey("topics.id"), nullable=True),
    Column("sender_agent_id", Integer, ForeignKey("agents.id"), nullable=True),
    Column("peer_role", String(64), nullable=True),
    Column("pair_key", String(200), nullable=True),
    Column("thread_id", String(64), nullable=True),
    # With a peer: the last seq given to an outbound text frame, and the last inbound one applied.
    Column("seq_sent", Integer, nullable=False, server_default="0"),
    Column("seq_received", Integer, nullable=False, server_default="0"),
    # The root at the top (through subtasks), whose hop budget this topic's work spends.
    Column("origin_topic_id", Integer, ForeignKey("topics.id"), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("finished_at", UTCDateTime, nullable=True),
    Column("closed_at", UTCDateTime, nullable=True),
    Column("closed_reason", Text, nullable=True),
    CheckConstraint(
        "kind IN ('conversation', 'task', 'agent_conversation', 'node')", name="topic_kind"
    ),
    CheckConstraint(
        "status IN ('open', 'done', 'failed', 'cancelled', 'closed')", name="topic_status"
    ),
    CheckConstraint("kind <> 'conversation' OR person_id IS NOT NULL", name="conversation_person"),
    CheckConstraint(AGENT_CONVERSATION_KEY, name="agent_conversation_key"),
    UniqueConstraint("connection", "thread_id", name="uq_topics_thread"),
    # At most one open conversation per person and agent.
    Index(
        "uq_topics_one_conversation",
        "person_id",
        "addressed_agent_id",
        unique=True,
        sqlite_where=text("kind = 'conversation' AND closed_at IS NULL"),
        postgresql_where=text("kind = 'conversation' AND closed_at IS NULL"),
    ),
    # At most one open agent conversation per (connection, root, pair of roles).
    Index(
        "uq_topics_one_agent_conversation",
        "connection",
        "root_topic_id",
        "pair_key",
        unique=True,
        sqlite_where=text("kind = 'agent_conversation' AND closed_at IS NULL"),
        postgresql_where=text("kind = 'agent_conversation' AND closed_at IS NULL"),
    ),
    Index(
        "uq_topics_one_per_node",
        "agent_id",
        unique=True,
        sqlite_where=text("kind = 'node'"),
        postgresql_where=text("kind = 'node'"),
    ),
    # The pages of the lists (keyset, newest first): each is one range of one of these.
    # Partial: most topics have no root and no parent, and counting them under NULL made an
    # equality on these columns look unselective to the planner (see migration 0009).
    Index(
        "ix_topics_root",
        "root_topic_id",
        "id",
        sqlite_where=text("root_topic_id IS NOT NULL"),
        postgresql_where=text("root_topic_id IS NOT NULL"),
    ),
    Index("ix_topics_kind", "kind", "id"),
    Index("ix_topics_kind_status", "kind", "status", "id"),
    Index("ix_topics_person_kind", "person_id", "kind", "id"),
    # A topic's subtasks, for a stop that reaches everything set off under a root (and their
    # page, newest first).
    Index(
        "ix_topics_reply",
        "reply_topic_id",
        "id",
        sqlite_where=text("reply_topic_id IS NOT NULL"),
        postgresql_where=text("reply_topic_id IS NOT NULL"),
    ),
    Index("ix_topics_pair", "pair_key", "id"),
)

# What agents set off for one origin (sends, subtasks, node questions) in its current window:
# a counter per origin, so that the check on every hop is one statement whatever was sent.
hop_counts = Table(
    "hop_counts",
    metadata,
    Column("origin_topic_id", Integer, ForeignKey("topics.id"), primary_key=True),
    Column("window_started_at", UTCDateTime, nullable=False),
    Column("hops", Integer, nullable=False),
    # When the origin was told its budget was spent (once per window).
    Column("noticed_at", UTCDateTime, nullable=True),
)

# One agent's context for one topic: its history is the topic's text; the brain's own session
# id and whether the last turn was stopped are kept here.
sessions = Table(
    "sessions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("agent_id", Integer, ForeignKey("agents.id"), nullable=False),
    Column("topic_id", Integer, ForeignKey("topics.id"), nullable=False),
    Column("brain_session_id", Text, nullable=True),
    Column("was_stopped", Boolean, nullable=False, server_default=text("false")),
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("agent_id", "topic_id", name="uq_sessions_agent_topic"),
)

runs = Table(
    "runs",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("agent_id", Integer, ForeignKey("agents.id"), nullable=False),
    Column("topic_id", Integer, ForeignKey("topics.id"), nullable=False),
    Column("session_id", Integer, ForeignKey("sessions.id"), nullable=False),
    Column("state", String(16), nullable=False),
    Column("reason", Text, nullable=True),
    Column("output", Text, nullable=True),
    # The last of what a command brain's process wrote on stderr (brains/stderr.py).
    Column("stderr", Text, nullable=True),
    Column("token_hash", String(64), nullable=True, unique=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("started_at", UTCDateTime, nullable=True),
    Column("finished_at", UTCDateTime, nullable=True),
    CheckConstraint(
        "state IN ('queued', 'running', 'finished', 'stopped', 'failed')", name="state"
    ),
    Index(
        "ix_runs_open_by_agent",
        "agent_id",
        sqlite_where=text("state IN ('queued', 'running')"),
        postgresql_where=text("state IN ('queued', 'running')"),
    ),
    # A session runs one turn at a time: the store refuses a second running run.
    Index(
        "uq_runs_one_running_per_session",
        "session_id",
        unique=True,
        sqlite_where=text("state = 'running'"),
        postgresql_where=text("state = 'running'"),
    ),
    # The lists' pages (newest first) of a topic's, an agent's, a state's runs.
    Index("ix_runs_topic", "topic_id", "id"),
    Index("ix_runs_agent", "agent_id", "id"),
    Index("ix_runs_state", "state", "id"),
    # The scheduler's and the queue's lookups: by state (then agent), and a session's waiting run.
    Index("ix_runs_state_agent", "state", "agent_id"),
    Index(
        "ix_runs_waiting_in_session",
        "session_id",
        sqlite_where=text("state = 'queued'"),
        postgresql_where=text("state = 'queued'"),
    ),
)

# Every piece of text in a topic. A message with a recipient waits for that agent's session in
# its topic; the run that takes it as input is recorded, so each is handled exactly once.
messages = Table(
    "messages",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("topic_id", Integer, ForeignKey("topics.id"), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("author_person_id", Integer, ForeignKey("people.id"), nullable=True),
    Column("author_agent_id", Integer, ForeignKey("agents.id"), nullable=True),
    Column("recipient_agent_id", Integer, ForeignKey("agents.id"), nullable=True),
    Column("run_id", Integer, ForeignKey("runs.id"), nullable=True),
    Column("from_run_id", Integer, ForeignKey("runs.id"), nullable=True),
    # A question to a node session from a run: where its answer goes.
    Column("reply_agent_id", Integer, ForeignKey("agents.id"), nullable=True),
    Column("reply_topic_id", Integer, ForeignKey("topics.id"), nullable=True),
    # Text from a peer installation's role: ``name@connection`` (no agent of ours wrote it).
    Column("author_role", String(128), nullable=True),
    Column("body", Text, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    # Text that came in from a channel conversation: that conversation (JSON of its ref), so
    # that the reply and any completion the run waits for know where the person is.
    Column("channel_ref", Text, nullable=True),
    CheckConstraint("kind IN ('text', 'reply', 'report', 'notice', 'result')", name="message_kind"),
    Index("ix_messages_topic", "topic_id", "id"),
    Index("ix_messages_run", "run_id"),
)

# What must be delivered, written in the transaction that decided it: a subtask's completion,
# an answer from a node session (later: channel posts, federation frames). Claimed by the outbox
# worker for a lease, delivered or retried at ``next_attempt_at``; kept afterwards.
outbox = Table(
    "outbox",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("idempotency_key", String(200), nullable=False, unique=True),
    Column("kind", String(32), nullable=False),
    Column("payload", Text, nullable=False),
    Column("state", String(16), nullable=False, server_default="pending"),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("last_error", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("delivered_at", UTCDateTime, nullable=True),
    Column("next_attempt_at", UTCDateTime, nullable=False),
    Column("claimed_by", String(64), nullable=True),
    Column("claimed_until", UTCDateTime, nullable=True),
    Column("last_attempt_at", UTCDateTime, nullable=True),
    # A frame for a peer: its connection, the agent conversation (topic) and seq it belongs to.
    # The federation sender claims these per connection, in (thread, seq) order; the general
    # worker leaves them alone.
    Column("connection", String(64), nullable=True),
    Column("thread_topic_id", Integer, nullable=True),
    Column("seq", Integer, nullable=True),
    # Where a routed delivery goes and why: bound | fallback (None: not routed), the reason,
    # and the destination in words.
    Column("route_mode", String(16), nullable=True),
    Column("route_reason", String(64), nullable=True),
    Column("route_destination", Text, nullable=True),
    CheckConstraint("state IN ('pending', 'delivered', 'failed')", name="outbox_state"),
    Index(
        "ix_outbox_due",
        "next_attempt_at",
        "id",
        sqlite_where=text("state = 'pending'"),
        postgresql_where=text("state = 'pending'"),
    ),
    Index(
        "ix_outbox_frames",
        "connection",
        "thread_topic_id",
        "seq",
        sqlite_where=text("state = 'pending' AND connection IS NOT NULL"),
        postgresql_where=text("state = 'pending' AND connection IS NOT NULL"),
    ),
    Index("ix_outbox_state", "state", "id"),
)

# A channel conversation bound to a session (``topic:ID``): what is said there goes to that
# session, what it completes comes back there. At most one live binding per conversation.
channel_bindings = Table(
    "channel_bindings",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("target_session_key", String(64), nullable=False),
    Column("target_kind", String(16), nullable=False),
    Column("channel", String(200), nullable=False),
    Column("account_id", String(200), nullable=False),
    Column("conversation_id", String(200), nullable=False),
    Column("parent_conversation_id", String(200), nullable=True),
    Column("status", String(16), nullable=False, server_default="active"),
    Column("bound_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=True),
    Column("bound_by", String(200), nullable=False),
    Column("last_activity_at", UTCDateTime, nullable=False),
    Column("idle_timeout_seconds", Integer, nullable=True),
    Column("max_age_seconds", Integer, nullable=True),
    Column("ended_at", UTCDateTime, nullable=True),
    Column("ended_reason", Text, nullable=True),
    Column("metadata_json", Text, nullable=False, server_default="{}"),
    CheckConstraint("status IN ('active', 'ending', 'ended')", name="binding_status"),
    CheckConstraint("target_kind IN ('subagent', 'session')", name="binding_target_kind"),
    Index(
        "uq_channel_bindings_live_conversation",
        "channel",
        "account_id",
        "conversation_id",
        unique=True,
        sqlite_where=text("status <> 'ended'"),
        postgresql_where=text("status <> 'ended'"),
    ),
    Index(
        "ix_channel_bindings_live_session",
        "target_session_key",
        sqlite_where=text("status <> 'ended'"),
        postgresql_where=text("status <> 'ended'"),
    ),
    Index("ix_channel_bindings_status", "status", "id"),
)

# A link to a peer installation. ``issued_token_hash``: the token this side gave the peer (only
# its hash); ``peer_token``: the token the peer gave us, to call it (kept, never shown).
# ``failures``, ``retry_at`` and ``last_error``: the sender's backoff after transport failures.
connections = Table(
    "connections",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("url", Text, nullable=False),
    Column("state", String(16), nullable=False, server_default="active"),
    Column("queue_limit", Integer, nullable=True),
    Column("issued_token_hash", String(64), nullable=False, unique=True),
    Column("peer_token", Text, nullable=False),
    Column("created_by_person_id", Integer, ForeignKey("people.id"), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("last_contact_at", UTCDateTime, nullable=True),
    Column("failures", Integer, nullable=False, server_default="0"),
    Column("retry_at", UTCDateTime, nullable=True),
    Column("last_error", Text, nullable=True),
    CheckConstraint("state IN ('active', 'paused', 'revoked')", name="connection_state"),
    CheckConstraint("queue_limit IS NULL OR queue_limit >= 1", name="queue_limit"),
)

# An invite an owner made: a one-time secret (its hash) that lets a peer make a connection
# named ``name`` here, until ``expires_at``.
invites = Table(
    "invites",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(64), nullable=False),
    Column("secret_hash", String(64), nullable=False, unique=True),
    Column("created_by_person_id", Integer, ForeignKey("people.id"), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    Column("used_at", UTCDateTime, nullable=True),
)

# Which local agents a peer may address over a connection.
exposures = Table(
    "exposures",
    metadata,
    Column("connection_id", Integer, ForeignKey("connections.id"), primary_key=True),
    Column("agent_id", Integer, ForeignKey("agents.id"), primary_key=True),
)

# Every text frame a peer sent, by its message_id, with the verdict it got: a repeat gets the
# same verdict again, as a duplicate, and changes nothing.
received_frames = Table(
    "received_frames",
    metadata,
    Column("connection_id", Integer, ForeignKey("connections.id"), primary_key=True),
    Column("message_id", String(64), primary_key=True),
    Column("verdict", String(16), nullable=False),
    Column("reason", String(32), nullable=True),
    Column("detail", Text, nullable=True),
    Column("received_at", UTCDateTime, nullable=False),
)

# Accounts of channels (a Discord bot, the web channel's ``home``): where the messages of their
# conversations go when no binding holds them.
channel_accounts = Table(
    "channel_accounts",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("channel", String(200), nullable=False),
    Column("account_id", String(200), nullable=False),
    Column("default_agent_id", Integer, ForeignKey("agents.id"), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("token", Text, nullable=True),  # the account's secret (a bot token); never shown
    Column("last_inbound_at", UTCDateTime, nullable=True),
    Column("last_outbound_at", UTCDateTime, nullable=True),
    UniqueConstraint("channel", "account_id", name="uq_channel_accounts"),
)

# Channel users known as people, per account: the account's allow-list.
channel_identities = Table(
    "channel_identities",
    metadata,
    Column("account_ref", Integer, ForeignKey("channel_accounts.id"), primary_key=True),
    Column("user_id", String(200), primary_key=True),
    Column("person_id", Integer, ForeignKey("people.id"), nullable=False),
    Column("linked_at", UTCDateTime, nullable=False),
)

# The web channel's conversations (a thread has a parent) and what is said in them: Parley's own
# rows. A key makes a repeated attempt (an outbox retry) make or post nothing twice.
web_conversations = Table(
    "web_conversations",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("account_id", String(200), nullable=False),
    Column("parent_id", Integer, ForeignKey("web_conversations.id"), nullable=True),
    Column("title", Text, nullable=False),
    Column("person_id", Integer, ForeignKey("people.id"), nullable=True),
    Column("idempotency_key", String(200), nullable=True, unique=True),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_web_conversations_account", "account_id", "parent_id", "id"),
)

web_messages = Table(
    "web_messages",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("conversation_id", Integer, ForeignKey("web_conversations.id"), nullable=False),
    Column("author", String(200), nullable=False),
    Column("body", Text, nullable=False),
    Column("idempotency_key", String(200), nullable=True, unique=True),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_web_messages_conversation", "conversation_id", "id"),
)
