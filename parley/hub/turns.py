"""What a starting run is given: engram, memory, the session's history, the new text, the root it
answers for and how to report there, and whether its previous turn was stopped."""

from __future__ import annotations

from dataclasses import dataclass

from parley.agents.model import Agent, AgentVariable, McpServer
from parley.conversations.model import Message, Topic, TopicKind
from parley.conversations.refusals import claim_notices
from parley.hub.actions import describe, tools_of
from parley.node.messages import McpServerGiven, SaidText, TurnStart
from parley.runs.model import Run, Session
from parley.store import Tx

HISTORY_LIMIT = 200  # earlier messages a turn is shown; older ones stay in the store


@dataclass(frozen=True)
class Starting:
    run: Run
    agent: Agent
    token: str


async def build_turns(tx: Tx, starting: list[Starting], parley_url: str) -> list[TurnStart]:
    """The turns of a batch of starting runs, read together: a few statements per batch."""
    if not starting:
        return []
    topics = await tx.topics.with_roots({s.run.topic_id for s in starting})
    sessions = await tx.runs.sessions_by_ids([s.run.session_id for s in starting])
    await claim_notices(tx, [(s.run.id, s.agent.id, s.run.topic_id) for s in starting])
    inputs = await tx.messages.inputs_of([s.run.id for s in starting])
    told = [session.id for session in sessions.values() if session.was_stopped]
    await tx.runs.clear_stopped(told)  # the notice is given once, to this turn
    variables = await _variables(tx, [s.agent for s in starting])
    return [
        await _turn(
            tx,
            s,
            topics,
            sessions[s.run.session_id],
            inputs.get(s.run.id, []),
            parley_url,
            variables.get(s.agent.id, []),
        )
        for s in starting
    ]


async def _variables(tx: Tx, agents: list[Agent]) -> dict[int, list[AgentVariable]]:
    declaring = {agent.id for agent in agents if agent.env or agent.env_from_server}
    return await tx.agents.variables(declaring) if declaring else {}


async def _turn(
    tx: Tx,
    starting: Starting,
    topics: dict[int, Topic],
    session: Session,
    inputs: list[Message],
    parley_url: str,
    variables: list[AgentVariable],
) -> TurnStart:
    run, agent = starting.run, starting.agent
    topic = topics[run.topic_id]
    history, memory = [], []
    if agent.is_node_session or _reads_context(agent.brain):
        history = await tx.messages.history(topic.id, run.id, HISTORY_LIMIT)
        memory = [note.note for note in await tx.agents.memory(agent.id)]
    return TurnStart(
        run_id=run.id,
        agent=agent.name,
        brain=agent.brain,
        engram=await _engram(tx, agent),
        memory=memory,
        history=[_said(m) for m in history if _shown(m, agent)],
        new_text=[_said(m) for m in inputs],
        root=_root_in_words(topic, topics.get(topic.root_id)),
        counterpart=topic.other_role(agent.id),
        was_stopped=session.was_stopped,
        brain_session_id=session.brain_session_id,
        workspace=agent.workspace,
        run_token=starting.token,
        parley_url=parley_url,
        tools=list(tools_of(agent)),
        env={v.name: v.value for v in variables if v.value is not None},
        env_from_server=[v.name for v in variables if v.from_server],
        session_id=session.id,
        mcp_servers=[_given(server) for server in agent.mcp_servers],
        ask=list(agent.ask),
    )


def _given(server: McpServer) -> McpServerGiven:
    return McpServerGiven(
        name=server.name,
        command=server.command,
        url=server.url,
        headers_from_env=dict(server.headers),
    )


def _reads_context(brain: str) -> bool:
    """Rule and offline brains look only at the new text: their turns skip loading the
    session's history and the agent's memory (the costliest reads of a turn). A node session
    always gets them: remembering every exchange is what it is for."""
    return brain.partition(":")[0] not in ("scripted", "offline")


async def _engram(tx: Tx, agent: Agent) -> str:
    """A node session's engram is its node's."""
    if not agent.is_node_session:
        return agent.engram
    node = await tx.nodes.by_name(agent.node_name)
    return node.engram if node else ""


def _said(message: Message) -> SaidText:
    return SaidText(author=message.author, text=message.body, cut_short=message.cut_short)


def _shown(message: Message, agent: Agent) -> bool:
    # Text addressed to another agent of the topic is not this agent's context... except in the
    # node topic, where every exchange is part of what the node session remembers.
    return message.recipient in (None, agent.name) or agent.is_node_session


def _root_in_words(topic: Topic, root: Topic | None) -> str:
    if root is None:
        return "nothing any more (its root is gone)"
    where = describe(root)
    if root.kind is TopicKind.NODE:
        return where
    if root.id == topic.id:
        return f"{where}; your reply is shown there"
    return f"{where}; use report(text) to post there"
