"""Many machines on loopback, each a process of its own: a hub (on PostgreSQL and NATS) and two
``parley node join`` processes with their own workspace folders. A relay crosses both nodes and
back to a person's task; a turn on a node is stopped from the hub; a node, the hub and NATS are
each killed or restarted mid-traffic with 200 tasks in flight, and every task gets its one
answer: none lost, none twice."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.aio.client import RawCredentials

from bench.machines import Machines, alive, until
from bench.ports import free_port
from parley.broker.nats_broker import lets_anyone_in
from parley.mesh.broker_auth import node_inbox_prefix
from tests.conftest import database_of_its_own
from tests.nats_server import NatsServer, running_nats_config

RELAY_A = """
rules:
  - when: {from: b}
    do:
      - report: "back {text}"
otherwise:
  - send: {to: b, text: "ping {text}"}
"""
# B takes a moment: a node killed mid-traffic is likely killed mid-turn.
RELAY_B = "otherwise: [{sleep: 0.1}, {reply: 'pong {text}'}]"
IN_FLIGHT = 200
ENDED = "ended"  # what a command brain leaves in its workspace just before its turn ends


def relay(machines: Machines, count: int, label: str = "t") -> dict[int, str]:
    """``count`` tasks for A, each to be relayed to B and back: their ids and texts."""
    tasks = {}
    for i in range(count):
        text = f"{label}{i}"
        made = machines.api.post("/tasks", json={"agent": "a", "text": text})
        assert made.status_code == 201, made.text
        tasks[made.json()["id"]] = text
    return tasks


def answers(machines: Machines, tasks: dict[int, str]) -> tuple[int, int]:
    """(lost, duplicated) of the tasks' relayed answers, as things stand."""
    lost = duplicated = 0
    for task, text in tasks.items():
        found = _answered(machines, task, text)
        lost += found == 0
        duplicated += max(found - 1, 0)
    return lost, duplicated


def all_answered(machines: Machines, tasks: dict[int, str]) -> Callable[[], bool]:
    """Whether every task has its answer yet. An answer stays, so each look reads only the
    tasks not seen answered, and stops at the first still waiting: reading all 200 at every
    look (ten a second) kept the hub busy answering the reads rather than relaying."""
    waiting = list(tasks.items())

    def check() -> bool:
        while waiting:
            task, text = waiting[0]
            if not _answered(machines, task, text):
                return False
            waiting.pop(0)
        return True

    return check


def _answered(machines: Machines, task: int, text: str) -> int:
    """How many times the task's relayed answer is there."""
    detail = machines.api.get(f"/tasks/{task}").json()
    bodies = [m["body"] for m in detail["messages"]["items"]]
    return bodies.count(f"back pong ping {text}")


@contextlib.contextmanager
def relaying_mesh(place: Path, database_url: str) -> Iterator[tuple[Machines, NatsServer]]:
    """A hub (``parley serve --broker``) on a nats-server started from ``parley mesh
    broker-config``'s file (only the hub's and the nodes' credentials get in), nodes n1 and n2
    with credentials the hub issued, agent A on n1 relaying to B on n2."""
    port = free_port()
    mesh = Machines(place, database_url, f"nats://127.0.0.1:{port}")
    try:
        with running_nats_config(mesh.broker_config(port), port) as nats:
            mesh.start_hub()
            mesh.joined("n1")
            mesh.joined("n2")
            mesh.hire("a", "n1", f"scripted:{_write(place / 'a.yaml', RELAY_A)}", 4)
            mesh.hire("b", "n2", f"scripted:{_write(place / 'b.yaml', RELAY_B)}", 4)
            yield mesh, nats
    finally:
        mesh.stop_all()


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Machines]:
    """One mesh for the tests that kill nothing: starting one costs seconds."""
    place = tmp_path_factory.mktemp("shared-mesh")
    with (
        database_of_its_own("mesh_shared") as database_url,
        relaying_mesh(place, database_url) as (mesh, _),
    ):
        yield mesh


@pytest.fixture
def mesh_and_broker(tmp_path: Path) -> Iterator[tuple[Machines, NatsServer]]:
    """A mesh of its own, and its broker, for a test that kills parts of it."""
    with (
        database_of_its_own("mesh_faults") as database_url,
        relaying_mesh(tmp_path, database_url) as both,
    ):
        yield both


@pytest.fixture
def machines(mesh_and_broker: tuple[Machines, NatsServer]) -> Machines:
    return mesh_and_broker[0]


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_relay_crosses_both_nodes_and_comes_back_to_the_person(shared: Machines) -> None:
    tasks = relay(shared, 1, "relay")
    assert until(all_answered(shared, tasks)), shared.log("hub")
    assert answers(shared, tasks) == (0, 0)
    nodes = {n["name"]: n for n in shared.api.get("/nodes").json()["items"]}
    assert {name: nodes[name]["agents"] for name in ("n1", "n2")} == {"n1": 1, "n2": 1}
    assert (shared.place / "n1" / "a").is_dir() and (shared.place / "n2" / "b").is_dir()


def test_another_nodes_credentials_are_refused_on_the_node_and_logged_on_the_hub(
    shared: Machines,
) -> None:
    shared.credentials("n3")  # n3's own exist: n1's are not them
    intruder = shared.join("n3", credentials=shared.credentials("n1"))
    assert intruder.wait(timeout=30) == 2
    said = "these credentials are node n1's, not n3's: on the hub run `parley node add n3`"
    assert said in shared.log("n3")


def test_the_broker_lets_no_anonymous_client_in_and_no_node_read_another_s_turns(
    shared: Machines,
) -> None:
    """From outside, against the mesh's own broker: no credentials, no connection; n1's
    credentials cannot listen to n2's turns nor to everything."""
    assert shared.broker_url is not None
    assert not asyncio.run(lets_anyone_in(shared.broker_url, 5))
    refused = asyncio.run(_subscriptions_refused(shared.broker_url, shared.credentials("n1")))
    assert refused == ["parley.node.n2.turn", ">"]


async def _subscriptions_refused(url: str, creds: Path) -> list[str]:
    """The subjects the broker refused n1's subscription to, as its errors name them."""
    errors: list[str] = []

    async def note(error: Exception) -> None:
        errors.append(str(error))

    client = await nats.connect(
        url,
        user_credentials=RawCredentials(creds.read_text()),
        inbox_prefix=node_inbox_prefix("n1"),
        error_cb=note,
        allow_reconnect=False,
    )
    refused: list[str] = []
    try:
        for subject in ("parley.node.n2.turn", ">"):
            await client.subscribe(subject)
            await client.flush(timeout=5)
            for _ in range(100):  # the server's error comes as its answer to the SUB
                if any(f'subscription to "{subject}"' in error.lower() for error in errors):
                    refused.append(subject)
                    break
                await asyncio.sleep(0.05)
    finally:
        await client.close()
    return refused


def test_a_turn_on_a_node_is_stopped_from_the_hub_and_its_process_group_killed(
    shared: Machines,
) -> None:
    pid_file = shared.place / "n2" / "sleeper" / "pid"  # in its workspace, on its node
    shared.hire("sleeper", "n2", "command:sh -c 'echo $$ > pid; sleep 60'")
    run = shared.api.post("/conversations/sleeper/messages", json={"text": "sleep"}).json()
    assert until(lambda: pid_file.exists() and pid_file.read_text().strip() != "")
    pid = int(pid_file.read_text())
    stopped = shared.api.post(f"/runs/{run['run_id']}/stop")
    assert stopped.status_code == 200, stopped.text
    assert until(lambda: not alive(pid), within=10)
    assert shared.api.get(f"/runs/{run['run_id']}").json()["run"]["state"] == "stopped"


def test_a_second_join_of_a_node_online_is_refused_and_a_replace_takes_it_over(
    shared: Machines,
) -> None:
    first = shared.nodes["n1"]
    second = shared.join("n1")
    assert second.wait(timeout=30) == 4  # a conflict
    log = shared.log("n1")
    assert f"node 'n1' is online already (host {socket.gethostname()}, pid {first.pid}," in log
    assert "stop that one first, or join with --replace to take its place" in log
    assert first.poll() is None
    # Someone waits on a turn of the first one: they are told what became of their text.
    shared.hire("napper", "n1", f"scripted:{_write(shared.place / 'nap.yaml', NAP)}")
    waiting = _say(shared, "napper", "hold on")
    assert until(lambda: _running(shared, "napper"))
    third = shared.join("n1", replace=True)  # the shared mesh goes on with this one
    assert first.wait(timeout=30) == 4
    assert f"node n1 was taken over by a join on host {socket.gethostname()} (pid {third.pid})" in (
        shared.log("n1")
    )
    _, said = waiting.communicate(timeout=60)
    assert (waiting.returncode, said) == (
        7,
        "error: node n1 stopped answering; your text waits for it, or move the agent with"
        " `parley agent reassign napper --node NODE`\n",
    )
    assert until(lambda: shared.node("n1")["status"] == "online")
    tasks = relay(shared, 1, "replaced")
    assert until(all_answered(shared, tasks)), shared.log("hub")
    assert answers(shared, tasks) == (0, 0)


NAP = "otherwise: [{sleep: 60}]"


def _say(machines: Machines, agent: str, text: str) -> subprocess.Popen[str]:
    """``parley say`` as a person runs it against the hub, waiting for the turn's end."""
    token = (machines.hub_dir / "private" / "owner-token").read_text().strip()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
    env |= {"PARLEY_URL": f"http://127.0.0.1:{machines.port}", "PARLEY_TOKEN": token}
    argv = [sys.executable, "-m", "parley", "say", agent, text]
    return subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _running(machines: Machines, agent: str) -> bool:
    found = machines.api.get("/runs", params={"agent": agent, "state": "running"}).json()
    return bool(found["items"])


def _run(machines: Machines, run_id: int) -> dict[str, Any]:
    run: dict[str, Any] = machines.api.get(f"/runs/{run_id}").json()["run"]
    return run


def test_a_node_the_hub_and_nats_each_failing_mid_traffic_lose_and_repeat_nothing(
    mesh_and_broker: tuple[Machines, NatsServer],
) -> None:
    """One mesh through three faults, each with its own 200 tasks in flight."""
    machines, nats_server = mesh_and_broker
    tasks = relay(machines, IN_FLIGHT, "node")
    machines.kill(machines.nodes["n2"])  # SIGKILL: its turns end with it, unreported
    assert until(lambda: machines.node("n2")["status"] == "offline")
    machines.joined("n2")  # the machine comes back
    assert until(all_answered(machines, tasks), within=300), machines.log("hub")
    assert answers(machines, tasks) == (0, 0)

    # A turn that ends while the hub is down is recorded as ended, once: not interrupted.
    machines.hire("late", "n1", f"command:sh -c 'sleep 1; touch {ENDED}; echo done'")
    late = machines.api.post("/conversations/late/messages", json={"text": "go"}).json()
    assert until(lambda: _run(machines, late["run_id"])["state"] == "running")
    tasks = relay(machines, IN_FLIGHT, "hub")
    assert machines.hub is not None
    machines.kill(machines.hub)
    assert until(lambda: (machines.place / "n1" / "late" / ENDED).exists())  # nodes go on
    machines.start_hub()
    assert until(all_answered(machines, tasks), within=300), machines.log("hub")
    assert answers(machines, tasks) == (0, 0)
    assert _run(machines, late["run_id"])["state"] == "finished"
    shown = machines.api.get("/conversations/late").json()["messages"]["items"]
    assert [m["body"] for m in shown if m["kind"] == "reply"] == ["done"]

    tasks = relay(machines, IN_FLIGHT, "nats")
    nats_server.stop()
    nats_server.start()
    assert until(all_answered(machines, tasks), within=300), machines.log("hub")
    assert answers(machines, tasks) == (0, 0)
