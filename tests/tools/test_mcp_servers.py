"""An agent's own MCP servers on its node, against real servers written with the ``mcp``
library (``mcp_test_server.py``): over stdio, started confined in the workspace and ended with
their process; over streamable HTTP, with a header taken from the node's environment."""

from __future__ import annotations

import asyncio
import shlex
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.ports import free_port
from parley.brains.confinement import ProcessPolicy
from parley.errors import Invalid, Unavailable
from parley.tools.mcp_servers import McpServers, McpServerSpec, McpTool
from tests.brains.fakes import serving
from tests.brains.test_command_brain import all_gone, read_pids
from tests.tools import mcp_test_server
from tests.tools.support import SERVER_ENVIRONMENT

SERVER = Path(mcp_test_server.__file__)
PYTHON = shlex.quote(sys.executable)
ENV = {"GIVEN": "given-value"}
# Reads its stdin and never writes: never answers `initialize`; notes its pid first.
SILENT = "import os, sys; open('pids', 'a').write(f'{os.getpid()}\\n'); sys.stdin.read()"


def stdio(name: str = "files", script: Path = SERVER) -> McpServerSpec:
    return McpServerSpec(name, command=f"{PYTHON} {shlex.quote(str(script))}")


def python(name: str, code: str) -> McpServerSpec:
    return McpServerSpec(name, command=f"{PYTHON} -c {shlex.quote(code)}")


def make_servers(**options: Any) -> McpServers:
    environment = {**SERVER_ENVIRONMENT, "MCP_TOKEN": "token-of-the-node-1234"}
    return McpServers(
        policy=ProcessPolicy(server_environment=environment),
        server_environment=environment,
        **{"start_seconds": 10.0, **options},
    )


@pytest.fixture
async def servers() -> AsyncIterator[McpServers]:
    made = make_servers()
    yield made
    await made.close()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


async def pid_of(servers: McpServers, session: str, server: str = "files") -> int:
    return int(await servers.call(session, server, "pid", {}))


async def test_tools_are_listed_with_their_descriptions_and_schemas(
    servers: McpServers, workspace: Path
) -> None:
    tools = await servers.tools("s1", [stdio()], workspace, ENV)
    by_name = {tool.name: tool for tool in tools}
    assert by_name["echo"] == McpTool(
        server="files",
        name="echo",
        description="Says the text back.",
        input_schema=by_name["echo"].input_schema,
    )
    schema = by_name["echo"].input_schema
    assert schema["type"] == "object" and schema["required"] == ["text"]
    assert schema["properties"]["text"]["type"] == "string"
    assert {"pid", "refuse", "sleep", "die", "big", "picture", "variable"} <= set(by_name)


async def test_a_call_returns_the_text_and_a_tool_error_is_invalid(
    servers: McpServers, workspace: Path
) -> None:
    await servers.tools("s1", [stdio()], workspace, ENV)
    assert await servers.call("s1", "files", "echo", {"text": "hello"}) == "hello"
    with pytest.raises(Invalid, match=r"^files\.refuse: .*not today"):
        await servers.call("s1", "files", "refuse", {"reason": "not today"})
    assert (
        await servers.call("s1", "files", "picture", {})
        == f"a dot:\n[image/png, {len(mcp_test_server.PNG)} bytes]"
    )
    with pytest.raises(Invalid, match="not started for this session"):
        await servers.call("s2", "files", "echo", {"text": "hello"})


async def test_a_session_reuses_its_process_and_another_gets_its_own(
    servers: McpServers, workspace: Path
) -> None:
    await servers.tools("s1", [stdio()], workspace, ENV)
    first = await pid_of(servers, "s1")
    await servers.tools("s1", [stdio()], workspace, ENV)
    assert await pid_of(servers, "s1") == first
    await servers.tools("s2", [stdio()], workspace, ENV)
    assert await pid_of(servers, "s2") != first


async def test_closing_a_session_ends_its_process(servers: McpServers, workspace: Path) -> None:
    await servers.tools("s1", [stdio()], workspace, ENV)
    pid = await pid_of(servers, "s1")
    await servers.close_session("s1")
    assert await all_gone([pid])
    with pytest.raises(Invalid):
        await servers.call("s1", "files", "pid", {})


async def test_closing_the_node_ends_every_server_and_refuses_new_ones(workspace: Path) -> None:
    servers = make_servers()
    await servers.tools("s1", [stdio()], workspace, ENV)
    await servers.tools("s2", [stdio()], workspace, ENV)
    pids = [await pid_of(servers, "s1"), await pid_of(servers, "s2")]
    await servers.close()
    await servers.close()  # idempotent
    assert await all_gone(pids)
    with pytest.raises(Unavailable, match="stopping"):
        await servers.tools("s1", [stdio()], workspace, ENV)


async def test_a_sweep_closes_an_idle_server(workspace: Path) -> None:
    # The servers' own clock, moved by the test: a loaded machine's pauses move it not.
    now = [1000.0]
    servers = make_servers(idle_seconds=60, monotonic=lambda: now[0])
    try:
        await servers.tools("s1", [stdio()], workspace, ENV)
        pid = await pid_of(servers, "s1")
        now[0] += 59.9
        await servers.sweep()
        assert not await all_gone([pid], within=0.1)  # used less than the idle time ago
        now[0] += 0.1
        await servers.sweep()
        assert await all_gone([pid])
    finally:
        await servers.close()


async def test_a_changed_spec_restarts_the_server(servers: McpServers, workspace: Path) -> None:
    await servers.tools("s1", [stdio()], workspace, ENV)
    pid = await pid_of(servers, "s1")
    changed = McpServerSpec("files", command=f"{stdio().command} --changed")
    await servers.tools("s1", [changed], workspace, ENV)
    assert await all_gone([pid])
    assert await pid_of(servers, "s1") != pid


async def test_the_server_sees_the_given_variables_not_the_node_s(
    servers: McpServers, workspace: Path
) -> None:
    await servers.tools("s1", [stdio()], workspace, ENV)
    seen = await servers.call("s1", "files", "variable", {"name": "GIVEN"})
    assert seen == "given-value"
    for hidden in ("SECRET_KEY", "MCP_TOKEN", "USER", "SHELL", "LOGNAME"):
        assert await servers.call("s1", "files", "variable", {"name": hidden}) == "(unset)"
    assert await servers.call("s1", "files", "variable", {"name": "LANG"}) == "C.UTF-8"


async def test_a_silent_server_is_unavailable_in_time_and_ended(workspace: Path) -> None:
    servers = make_servers(start_seconds=1.0)
    try:
        started = time.monotonic()
        with pytest.raises(Unavailable, match="MCP server mute did not answer within 1 s"):
            await servers.tools("s1", [python("mute", SILENT)], workspace, ENV)
        assert time.monotonic() - started < 20  # 1 s and the stop, not forever (a loaded machine)
        assert await all_gone(await read_pids(workspace / "pids"))
    finally:
        await servers.close()


async def test_a_server_closed_while_its_process_starts_is_ended(
    workspace: Path, pipes_held: asyncio.Event
) -> None:
    """A turn stopped as it starts its servers, then its session closed: the stop reaches the
    server's start before its pipes are joined, where asyncio kills the launcher alone."""
    servers = make_servers()
    try:
        starting = asyncio.create_task(
            servers.tools("s1", [python("mute", SILENT)], workspace, ENV)
        )
        [pid] = await read_pids(workspace / "pids")  # it runs; its start waits for its pipes
        starting.cancel()
        closing = asyncio.create_task(servers.close_session("s1"))
        assert await all_gone([pid])  # its pipes still held: the server went with its launcher
        pipes_held.set()
        async with asyncio.timeout(20):
            await closing
    finally:
        pipes_held.set()
        await servers.close()


async def test_a_missing_command_is_unavailable_saying_so(
    servers: McpServers, workspace: Path
) -> None:
    spec = McpServerSpec("nothing", command="no-such-command-here --flag")
    with pytest.raises(Unavailable, match="cannot run 'no-such-command-here'") as raised:
        await servers.tools("s1", [spec], workspace, ENV)
    assert str(raised.value).startswith("MCP server nothing did not start")


async def test_a_server_exiting_at_start_is_unavailable_quoting_its_stderr(
    servers: McpServers, workspace: Path
) -> None:
    spec = python("broken", "import sys; sys.exit('no config file found')")
    with pytest.raises(Unavailable, match=r"(?s)broken did not start.*no config file found"):
        await servers.tools("s1", [spec], workspace, ENV)


async def test_a_call_past_its_time_is_unavailable_and_the_server_restarts(
    workspace: Path,
) -> None:
    servers = make_servers(call_seconds=0.5)
    try:
        await servers.tools("s1", [stdio()], workspace, ENV)
        pid = await pid_of(servers, "s1")
        started = time.monotonic()
        with pytest.raises(Unavailable, match=r"files did not answer within 0\.5 s"):
            await servers.call("s1", "files", "sleep", {"seconds": 30})
        assert time.monotonic() - started < 15  # not the call's 30 s (a loaded machine is slow)
        await servers.tools("s1", [stdio()], workspace, ENV)
        assert await all_gone([pid])
        assert await pid_of(servers, "s1") != pid
    finally:
        await servers.close()


async def test_a_server_dying_mid_call_is_unavailable_and_started_again(
    servers: McpServers, workspace: Path
) -> None:
    await servers.tools("s1", [stdio()], workspace, ENV)
    pid = await pid_of(servers, "s1")
    with pytest.raises(Unavailable, match="MCP server files has stopped"):
        await servers.call("s1", "files", "die", {})
    with pytest.raises(Unavailable, match="starts again next turn"):
        await servers.call("s1", "files", "echo", {"text": "hello"})
    await servers.tools("s1", [stdio()], workspace, ENV)
    assert await pid_of(servers, "s1") != pid


async def test_a_cancelled_call_leaves_the_server_serving(
    servers: McpServers, workspace: Path
) -> None:
    await servers.tools("s1", [stdio()], workspace, ENV)
    pid = await pid_of(servers, "s1")
    call = asyncio.create_task(servers.call("s1", "files", "sleep", {"seconds": 0.5}))
    await asyncio.sleep(0.2)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await servers.call("s1", "files", "echo", {"text": "still here"}) == "still here"
    assert await pid_of(servers, "s1") == pid


async def test_a_big_result_is_cut_with_a_note(workspace: Path) -> None:
    servers = make_servers(max_result_bytes=1000)
    try:
        await servers.tools("s1", [stdio()], workspace, ENV)
        text = await servers.call("s1", "files", "big", {"size": 5000})
        kept, note = text.split("\n")
        assert kept == "a" * 1000
        assert note == "[4000 more bytes of the result dropped: only the first 1000 are kept]"
    finally:
        await servers.close()


# --- streamable HTTP ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with serving(mcp_test_server.http_app()) as url:
        yield f"{url}/mcp"


def http(url: str, **headers: str) -> McpServerSpec:
    return McpServerSpec("remote", url=url, headers_from_env=headers)


async def test_an_http_server_is_listed_and_called_with_a_header_from_the_environment(
    servers: McpServers, workspace: Path, http_url: str
) -> None:
    tools = await servers.tools("s1", [http(http_url, Authorization="MCP_TOKEN")], workspace, {})
    assert {"echo", "authorization"} <= {tool.name for tool in tools}
    assert all(tool.server == "remote" for tool in tools)
    assert await servers.call("s1", "remote", "echo", {"text": "over http"}) == "over http"
    seen = await servers.call("s1", "remote", "authorization", {})
    assert seen == "[redacted]"  # it was the node's token: never shown, even to the model


async def test_a_header_from_a_missing_variable_is_invalid_naming_it(
    servers: McpServers, workspace: Path, http_url: str
) -> None:
    with pytest.raises(Invalid, match="takes a header from NOT_SET_HERE"):
        await servers.tools("s1", [http(http_url, Authorization="NOT_SET_HERE")], workspace, {})


async def test_an_unreachable_url_is_unavailable(servers: McpServers, workspace: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    with pytest.raises(Unavailable, match="MCP server remote"):
        await servers.tools("s1", [http(url, Authorization="MCP_TOKEN")], workspace, {})
