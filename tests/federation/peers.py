"""Starting installations and connecting them, as their owners would: through the CLI."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.ports import free_port
from parley.clock import Clock
from parley.settings import Settings
from tests.served import PortTaken, Served, serving
from tests.support import bearer, until


@dataclass
class Installation:
    name: str
    served: Served
    settings: Settings

    @property
    def url(self) -> str:
        return self.served.url

    def cli(self, *args: str, token: str | None = None) -> Any:
        """Run ``parley ARGS`` against this installation; the result (checked by the caller)."""
        return self.served.run(*args, token=token)

    def ok(self, *args: str) -> str:
        result = self.cli(*args)
        assert result.exit_code == 0, (args, result.output)
        return str(result.output)

    def api(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> Any:
        headers = bearer(token or self.served.owner_token) | kwargs.pop("headers", {})
        return httpx.request(method, self.url + path, headers=headers, timeout=30, **kwargs)

    def get(self, path: str, token: str | None = None) -> Any:
        answer = self.api("GET", "/api/v1" + path, token)
        assert answer.status_code == 200, answer.text
        return answer.json()


def settings_for(name: str, tmp_path: Path, store_url: str, port: int, **more: Any) -> Settings:
    return Settings(
        data_dir=tmp_path / name,
        database_url=store_url,
        port=port,
        public_url=f"http://127.0.0.1:{port}",
        heartbeat_seconds=3600,
        sweep_seconds=3600,
        node_name=name,
        **more,
    )


@contextmanager
def installations(
    tmp_path: Path,
    store_urls: list[str],
    names: list[str],
    clocks: dict[str, Clock] | None = None,
) -> Iterator[list[Installation]]:
    """One real server per name, each with its own store, data folder and port."""
    with ExitStack() as stack:
        started = []
        for name, store_url in zip(names, store_urls, strict=False):
            clock = (clocks or {}).get(name)
            started.append(_start_on_a_free_port(stack, name, tmp_path, store_url, clock))
        yield started


def _start_on_a_free_port(
    stack: ExitStack, name: str, tmp_path: Path, store_url: str, clock: Clock | None, tries: int = 3
) -> Installation:
    """An installation's settings name its own port (its public URL), so a port taken between
    its pick and the server's bind means new settings: picked again, ``tries`` times in all."""
    port = free_port()
    settings = settings_for(name, tmp_path, store_url, port)
    try:
        return Installation(name, stack.enter_context(serving(settings, clock, port)), settings)
    except PortTaken:
        if tries <= 1:
            raise
        return _start_on_a_free_port(stack, name, tmp_path, store_url, clock, tries - 1)


def invite(inviter: Installation, name: str, *options: str) -> str:
    """An invite code, as ``parley connection invite`` prints it (its first line)."""
    output = inviter.ok("connection", "invite", "--name", name, *options)
    code = output.strip().splitlines()[0]
    assert code.startswith("parley-invite:"), output
    return code


def connect(inviter: Installation, acceptor: Installation) -> None:
    """Each side names the connection after the other installation."""
    code = invite(inviter, acceptor.name)
    acceptor.ok("connection", "accept", code, "--name", inviter.name)


def hire_scripted(at: Installation, name: str, rules: str, folder: Path) -> None:
    """Hire ``name`` on ``at``'s node with a scripted brain of ``rules`` (YAML)."""
    path = folder / f"{at.name}-{name}.yaml"
    path.write_text(rules)
    at.ok("agent", "hire", name, "--node", at.name, "--brain", f"scripted:{path}")


def wait_for(check: Callable[[], bool], within: float = 60.0) -> None:
    """Poll ``check`` until it holds (background work: the sender, the scheduler). The bound
    only guards against a hang."""
    assert until(check, within), "timed out waiting"


def messages(at: Installation, topic_id: int, token: str | None = None) -> list[dict[str, Any]]:
    """A topic's messages, oldest first."""
    page = at.get(f"/topics/{topic_id}/messages?limit=500", token)
    return list(reversed(page["items"]))


def agent_conversations(at: Installation, token: str | None = None) -> list[dict[str, Any]]:
    page = at.get("/agent-conversations?include_closed=true&limit=500", token)
    return list(page["items"])


def handshake_as_peer(at: Installation, name: str = "peer") -> str:
    """Be a peer installation of ``at`` by the real protocol: take an invite's secret to its
    handshake; the token ``at`` issued us (``at`` will call a URL where nothing answers)."""
    code = invite(at, name)
    secret = json.loads(base64.urlsafe_b64decode(code.split(":", 1)[1] + "=="))["secret"]
    offered = {"secret": secret, "url": "http://127.0.0.1:9", "token": "ppt_" + "o" * 43}
    answer = httpx.post(at.url + "/federation/v1/handshake", json=offered, timeout=30)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["token"])


def text_frame(thread_id: str, seq: int, message_id: str, **fields: Any) -> dict[str, Any]:
    frame = {
        "type": "text",
        "thread_id": thread_id,
        "seq": seq,
        "message_id": message_id,
        "from_role": "visitor",
        "to_role": "host",
        "body": f"text {seq}",
    }
    return frame | fields


# An agent that keeps in its memory what it is told, and who told it.
LISTENER = """
otherwise:
  - remember: "{sender}: {text}"
"""


class ComesAndGoes:
    """An installation on one port and store that a test starts and stops at will, its store
    kept between: a peer that goes away and comes back."""

    def __init__(self, name: str, tmp_path: Path, store_url: str) -> None:
        self.name, self.port = name, free_port()
        self.settings = settings_for(name, tmp_path, store_url, self.port)

    @contextmanager
    def up(self) -> Iterator[Installation]:
        with serving(self.settings, port=self.port) as served:
            yield Installation(self.name, served, self.settings)


def sender_and_listener(one: Installation, two: Installation, rules: str, folder: Path) -> None:
    """``one`` connected to ``two``, a ``sender`` on one running ``rules``, and on two a
    ``listener`` that one may address."""
    connect(one, two)
    hire_scripted(one, "sender", rules, folder)
    hire_scripted(two, "listener", LISTENER, folder)
    two.ok("connection", "expose", one.name, "listener")


def frames(at: Installation) -> list[dict[str, Any]]:
    """The wire frames in ``at``'s outbox, oldest first."""
    items = at.get("/deliveries?limit=1000")["items"]
    return sorted((d for d in items if d["kind"] == "frame"), key=lambda d: d["id"])


def only_connection(at: Installation) -> dict[str, Any]:
    """``at``'s one connection, as ``connection list`` shows it."""
    (link,) = at.get("/connections")["items"]
    return dict(link)


def texts_received(at: Installation) -> list[str]:
    """The text of every agent conversation ``at`` can read, conversation by conversation."""
    return [
        m["body"]
        for c in agent_conversations(at)
        for m in messages(at, c["id"])
        if m["kind"] == "text"
    ]
