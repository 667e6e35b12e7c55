"""Who holds a node's name: the instance (one process's life as the node) that registered under
it, or that this hub heard from under it since it started. While that one is online, another
instance is refused the name unless it comes to replace it; the hub's own node is never taken.

Kept in the hub's memory: a hub back from a stop learns each holder from its next heartbeat."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from parley.mesh.model import Node, NodeStatus
from parley.node.messages import Register


@dataclass(frozen=True)
class Holder:
    node: str
    instance: str
    # Unknown ("", None) when learnt from a heartbeat, which does not say.
    hostname: str = ""
    pid: int | None = None


class NodeClaims:
    def __init__(self, offline_after: timedelta, own: Holder | None = None) -> None:
        """``own``: the hub's own node, if it hosts one."""
        self._offline_after = offline_after
        self._own = own
        self._holders: dict[str, Holder] = {} if own is None else {own.node: own}

    def refusal(self, message: Register, known: Node | None, now: datetime) -> str | None:
        """Why ``message`` may not have its name now (``known``: the node as stored); None if
        it may."""
        name = message.node
        if self.owns(name) and message.instance != self._holders[name].instance:
            return f"node {name!r} is the hub's own node; join under another name"
        if known is None or known.status(now, self._offline_after) is NodeStatus.OFFLINE:
            return None
        holder = self._holders.get(name)
        if message.replace or (holder is not None and holder.instance == message.instance):
            return None
        return (
            f"node {name!r} is online already ({_described(known, holder, now)}); stop that one"
            " first, or join with --replace to take its place"
        )

    def owns(self, node: str) -> bool:
        """Whether ``node`` is the hub's own."""
        return self._own is not None and self._own.node == node

    def takes_over(self, message: Register, known: Node | None) -> bool:
        """Whether an accepted ``message`` takes the name from another instance, which may
        still run (and must stop: it would take the node's turns too)."""
        holder = self._holders.get(message.node)
        return known is not None and (holder is None or holder.instance != message.instance)

    def hold(self, message: Register) -> None:
        holder = Holder(message.node, message.instance, message.hostname, message.pid)
        self._holders[message.node] = holder

    def release(self, node: str) -> None:
        """Nobody holds the name now (the node was removed); the hub's own node keeps its own."""
        if not self.owns(node):
            self._holders.pop(node, None)

    def holder(self, node: str) -> Holder | None:
        return self._holders.get(node)

    def heard(self, node: str, instance: str) -> bool:
        """Whether a heartbeat of ``instance`` is the node's (the first heard since this hub
        started holds the name); an instance that does not say is heard as the node's."""
        if not instance:
            return True
        holder = self._holders.setdefault(node, Holder(node, instance))
        return holder.instance == instance


def _described(node: Node, holder: Holder | None, now: datetime) -> str:
    pid = f", pid {holder.pid}" if holder is not None and holder.pid is not None else ""
    silent = (now - node.last_seen_at).total_seconds()
    return (
        f"host {node.hostname}{pid}, workspaces {node.workspace_root}, last heard {silent:.0f}s ago"
    )
