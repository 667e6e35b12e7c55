"""Who reaches Parley over A2A, and which agents: an owner lets a client in (a token, shown
once), removes it (its token stops at once, its contexts close, their turns stop), and exposes
or hides agents. Every client reaches every exposed agent."""

from __future__ import annotations

from parley.a2a.model import A2AClient, Exposed, NewA2AClient
from parley.agents.lookup import agent_by_name
from parley.clock import Clock
from parley.conversations.lifetime import close_root
from parley.errors import Invalid, NotFound
from parley.naming import check_name
from parley.people.accounts import require_owner
from parley.people.model import Person
from parley.store import Tx
from parley.tokens import hash_token, new_a2a_token


async def add_client(tx: Tx, clock: Clock, by: Person, name: str) -> NewA2AClient:
    require_owner(by, "let an A2A client in")
    check_name("A2A client", name)
    token = new_a2a_token()
    client = await tx.a2a.add_client(name, hash_token(token), by.id, clock.now())
    return NewA2AClient(client, token)


async def remove_client(tx: Tx, clock: Clock, by: Person, name: str) -> A2AClient:
    """Idempotent: removing a removed client changes nothing."""
    require_owner(by, "remove an A2A client")
    client = await client_by_name(tx, name)
    if not client.is_active:
        return client
    now = clock.now()
    await tx.a2a.remove_client(client.id, hash_token(new_a2a_token()), now)
    for topic_id in await tx.a2a.open_contexts_of(client.id):
        topic = await tx.topics.by_id(topic_id)
        assert topic is not None
        await close_root(tx, now, topic, f"A2A client {name} removed by {by.name}")
    return await client_by_name(tx, name)


async def clients(tx: Tx, by: Person) -> list[A2AClient]:
    require_owner(by, "list A2A clients")
    return await tx.a2a.clients()


async def client_by_name(tx: Tx, name: str) -> A2AClient:
    client = await tx.a2a.client_by_name(name)
    if client is None:
        raise NotFound(f"no A2A client named {name!r}", field="name")
    return client


async def expose(tx: Tx, clock: Clock, by: Person, agent_name: str) -> Exposed:
    """Idempotent."""
    require_owner(by, "expose an agent over A2A")
    agent = await agent_by_name(tx, agent_name)
    if agent.is_node_session:
        raise Invalid(f"{agent.name} is a node session: it answers people of this mesh only")
    await tx.a2a.expose(agent.id, clock.now())
    found = await tx.a2a.exposed_by_name(agent.name)
    assert found is not None
    return found


async def hide(tx: Tx, by: Person, agent_name: str) -> bool:
    """The agent's card and endpoint answer 404 from now on; its contexts' history stays.
    False when it was not exposed."""
    require_owner(by, "hide an agent from A2A")
    agent = await agent_by_name(tx, agent_name)
    return await tx.a2a.hide(agent.id)


async def exposed(tx: Tx, by: Person) -> list[Exposed]:
    require_owner(by, "list the agents exposed over A2A")
    return await tx.a2a.exposed()
