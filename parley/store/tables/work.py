"""What agents work on and how: topics (every kind), sessions, runs, messages, hop counters."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    ForeignKey,
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

# An agent conversation's key and parties: both roles here (connection 'local'), or one here and
# the peer's by name; a local one always has a root, a peer's may be its own (set just after it
# is inserted, when its id is known).
AGENT_CONVERSATION_KEY = (
    "kind <> 'agent_conversation' OR (connection IS NOT NULL AND thread_id IS NOT NULL"
    " AND pair_key IS NOT NULL AND ((connection = 'local' AND root_topic_id IS NOT NULL"
    " AND sender_agent_id IS NOT NULL AND peer_role IS NULL) OR (connection <> 'local'"
    " AND sender_agent_id IS NULL AND peer_role IS NOT NULL)))"
)

ONE_CONVERSATION = "kind = 'conversation' AND closed_at IS NULL AND a2a_client_id IS NULL"

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
    # A conversation with an A2A client: one per (client, agent, context), its person the owner
    # who let the client in; a client holds as many with an agent as it has contexts.
    Column("a2a_client_id", Integer, ForeignKey("a2a_clients.id"), nullable=True),
    Column("a2a_context", String(200), nullable=True),
    CheckConstraint(
        "kind IN ('conversation', 'task', 'agent_conversation', 'node')", name="topic_kind"
    ),
    CheckConstraint(
        "status IN ('open', 'done', 'failed', 'cancelled', 'closed')", name="topic_status"
    ),
    CheckConstraint("kind <> 'conversation' OR person_id IS NOT NULL", name="conversation_person"),
    CheckConstraint(AGENT_CONVERSATION_KEY, name="agent_conversation_key"),
    UniqueConstraint("connection", "thread_id", name="uq_topics_thread"),
    # At most one open conversation per person and agent (an A2A client's are per context).
    partial_index(
        "uq_topics_one_conversation",
        "person_id",
        "addressed_agent_id",
        unique=True,
        where=ONE_CONVERSATION,
    ),
    partial_index(
        "uq_topics_a2a_context",
        "a2a_client_id",
        "addressed_agent_id",
        "a2a_context",
        unique=True,
        where="a2a_client_id IS NOT NULL",
    ),
    # At most one open agent conversation per (connection, root, pair of roles).
    partial_index(
        "uq_topics_one_agent_conversation",
        "connection",
        "root_topic_id",
        "pair_key",
        unique=True,
        where="kind = 'agent_conversation' AND closed_at IS NULL",
    ),
    partial_index(
        "uq_topics_one_per_node",
        "agent_id",
        unique=True,
        where="kind = 'node'",
    ),
    # The pages of the lists (keyset, newest first): each is one range of one of these.
    # Partial: most topics have no root and no parent, and counting them under NULL made an
    # equality on these columns look unselective to the planner (see migration 0009).
    partial_index(
        "ix_topics_root",
        "root_topic_id",
        "id",
        where="root_topic_id IS NOT NULL",
    ),
    Index("ix_topics_kind", "kind", "id"),
    Index("ix_topics_kind_status", "kind", "status", "id"),
    Index("ix_topics_person_kind", "person_id", "kind", "id"),
    # A topic's subtasks, for a stop that reaches everything set off under a root (and their
    # page, newest first).
    partial_index(
        "ix_topics_reply",
        "reply_topic_id",
        "id",
        where="reply_topic_id IS NOT NULL",
    ),
    Index("ix_topics_pair", "pair_key", "id"),
    # The subtasks one run spawned (the run inspector's "runs it set off"; migration 0030).
    partial_index(
        "ix_topics_spawned_by",
        "spawned_by_run_id",
        where="spawned_by_run_id IS NOT NULL",
    ),
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
    # The last of what a command brain's process wrote on stderr (brains/tail.py).
    Column("stderr", Text, nullable=True),
    Column("token_hash", String(64), nullable=True, unique=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("started_at", UTCDateTime, nullable=True),
    Column("finished_at", UTCDateTime, nullable=True),
    CheckConstraint(
        "state IN ('queued', 'running', 'finished', 'stopped', 'failed')", name="state"
    ),
    partial_index(
        "ix_runs_open_by_agent",
        "agent_id",
        where="state IN ('queued', 'running')",
    ),
    # A session runs one turn at a time: the store refuses a second running run.
    partial_index(
        "uq_runs_one_running_per_session",
        "session_id",
        unique=True,
        where="state = 'running'",
    ),
    # The lists' pages (newest first) of a topic's, an agent's, a state's runs.
    Index("ix_runs_topic", "topic_id", "id"),
    Index("ix_runs_agent", "agent_id", "id"),
    Index("ix_runs_state", "state", "id"),
    # The scheduler's and the queue's lookups: by state (then agent), and a session's waiting run.
    Index("ix_runs_state_agent", "state", "agent_id"),
    partial_index(
        "ix_runs_waiting_in_session",
        "session_id",
        where="state = 'queued'",
    ),
)

_UNCLAIMED = "run_id IS NULL AND recipient_agent_id IS NOT NULL"
# ``client/agent/messageId``: two ids, then a messageId of at most 200 characters.
SENT_AS_LENGTH = 256

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
    # A reply that is what its turn had said when it was stopped, failed or interrupted.
    Column("cut_short", Boolean, nullable=False, server_default=text("false")),
    # An A2A client's text that continues one of its tasks: that task's first text.
    Column("a2a_task_id", Integer, ForeignKey("messages.id"), nullable=True),
    # An A2A client's text: its own id for it (``messageId``), under the client and the agent
    # (``parley/a2a/contexts.py``'s ``sent_key``), so that the same text sent again is found.
    Column("a2a_sent_as", String(SENT_AS_LENGTH), nullable=True),
    CheckConstraint("kind IN ('text', 'reply', 'report', 'notice', 'result')", name="message_kind"),
    Index("ix_messages_topic", "topic_id", "id"),
    # Messages a run took, by run (migration 0028 says why the others are left out).
    partial_index(
        "ix_messages_run",
        "run_id",
        where="run_id IS NOT NULL",
    ),
    # Notices for an agent that no turn has had yet (``MessagesRepo.claim_notices``).
    partial_index(
        "ix_messages_unclaimed",
        "topic_id",
        "recipient_agent_id",
        where=_UNCLAIMED,
    ),
    # The texts that continue an A2A task, by task (migration 0031).
    partial_index(
        "ix_messages_a2a_task",
        "a2a_task_id",
        where="a2a_task_id IS NOT NULL",
    ),
    # One text per A2A client's messageId with an agent (migration 0032).
    partial_index(
        "ux_messages_a2a_sent_as",
        "a2a_sent_as",
        unique=True,
        where="a2a_sent_as IS NOT NULL",
    ),
)

# The input a run was given when it ended without answering it (its node lost, the hub stopped
# under it): the text itself moved on to the session's next run (``messages.run_id``), and the
# failed run still shows what it had.
given_inputs = Table(
    "given_inputs",
    metadata,
    Column("run_id", Integer, ForeignKey("runs.id"), primary_key=True),
    Column("message_id", Integer, ForeignKey("messages.id"), primary_key=True),
)


# Each tool call of a run's turn, in order (``parley/node/tool_calls.py``), kept with its end.
tool_calls = Table(
    "tool_calls",
    metadata,
    Column("run_id", Integer, ForeignKey("runs.id"), primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("tool", String(64), nullable=False),
    Column("arguments", Text, nullable=False),
    Column("result_bytes", BigInteger, nullable=False),
    Column("duration_ms", BigInteger, nullable=False),
    Column("error", Text, nullable=True),
    Column("after_chars", BigInteger, nullable=False),
)


# A tool call that waits for a person's yes or no before it acts (``parley/approvals/``): its
# exact arguments, and how it was decided; at most one decision, by the first who gives it.
approvals = Table(
    "approvals",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", Integer, ForeignKey("runs.id"), nullable=False),
    Column("tool", String(200), nullable=False),
    Column("arguments", Text, nullable=False),
    Column("state", String(16), nullable=False),
    Column("asked_at", UTCDateTime, nullable=False),
    Column("deadline", UTCDateTime, nullable=False),
    Column("decided_at", UTCDateTime, nullable=True),
    Column("decided_by_person_id", Integer, ForeignKey("people.id"), nullable=True),
    Column("reason", Text, nullable=True),
    CheckConstraint("state IN ('waiting', 'approved', 'denied')", name="state"),
    CheckConstraint("(state = 'waiting') = (decided_at IS NULL)", name="decided_when_not_waiting"),
    Index("ix_approvals_run", "run_id"),
    partial_index(
        "ix_approvals_waiting",
        "id",
        where="state = 'waiting'",
    ),
)
