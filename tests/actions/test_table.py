"""Every surface offers exactly the table's actions, each with the table's parameters: the model
brain's tools and prompt, the rule brain's acts, the deferred recorder, the wire, the hub's
actions, the API's routes and bodies, and ``parley act``. A drift on any of them fails here."""

from __future__ import annotations

import inspect
from typing import Any

import typer
from typer.core import TyperArgument, TyperGroup, TyperOption

from parley.actions.table import (
    ACTIONS,
    AGENT_TOOLS,
    NODE_SESSION_TOOLS,
    READ_ONLY_TOOLS,
    WORKSPACE_TOOLS,
    Action,
    Kind,
)
from parley.app import create_app
from parley.brains.brain import Turn
from parley.brains.deferred import DeferredActions
from parley.brains.model_brain import tool_definitions
from parley.brains.prompt import system_prompt
from parley.brains.scripted import ACTS
from parley.cli import act
from parley.hub.actions import RunActing
from parley.node.messages import ActionCall
from parley.settings import Settings
from parley.tools.workspace import WorkspaceTools
from tests.brains.support import a_turn


def _params(action: Action) -> dict[str, tuple[str, bool]]:
    """Each parameter's JSON type and whether it is required, as the table says."""
    return {p.name: (p.kind.json_type, p.required) for p in action.params}


def _sample(action: Action) -> dict[str, str | bool]:
    return {p.name: True if p.kind is Kind.FLAG else "x" for p in action.params}


def test_the_table_holds_the_six_actions_of_the_design_and_the_node_session_s_three() -> None:
    assert AGENT_TOOLS == ("send", "report", "spawn", "complete", "remember", "ask_node")
    assert NODE_SESSION_TOOLS == ("send", "remember", "ask_node")


def test_the_table_holds_the_six_workspace_tools_after_parley_s_actions() -> None:
    assert WORKSPACE_TOOLS == ("read", "list", "find", "write", "edit", "run")
    assert list(ACTIONS) == [*AGENT_TOOLS, *WORKSPACE_TOOLS]
    assert all(ACTIONS[name].in_workspace for name in WORKSPACE_TOOLS)
    assert not any(ACTIONS[name].in_workspace for name in AGENT_TOOLS)
    assert set(READ_ONLY_TOOLS) < set(WORKSPACE_TOOLS)


def test_an_optional_path_is_shown_with_its_default_everywhere() -> None:
    assert ACTIONS["list"].signature() == 'list(path=".")'
    assert ACTIONS["find"].command_line() == "parley act find TEXT [PATH]"
    assert ACTIONS["find"].json_schema()["required"] == ["text"]


def test_the_model_brain_s_tools_are_the_table_s() -> None:
    tools = tool_definitions(AGENT_TOOLS + WORKSPACE_TOOLS)
    assert [tool.name for tool in tools] == list(ACTIONS)
    for tool in tools:
        schema = tool.parameters_json_schema
        required = set(schema["required"])
        offered = {
            name: (spec["type"], name in required) for name, spec in schema["properties"].items()
        }
        assert offered == _params(ACTIONS[tool.name])
        assert schema["additionalProperties"] is False
        assert tool.description == ACTIONS[tool.name].described()


def test_the_prompt_lists_the_run_s_tools_as_the_table_describes_them() -> None:
    prompt = system_prompt(a_turn(tools=NODE_SESSION_TOOLS))
    for name, action in ACTIONS.items():
        assert (action.described() in prompt) == (name in NODE_SESSION_TOOLS)
    assert "spawn(agent, text, thread=false)" in system_prompt(a_turn())


def test_a_turn_offers_every_action_unless_told_otherwise() -> None:
    defaults = {p.name: p.default for p in inspect.signature(Turn).parameters.values()}
    assert defaults["tools"] == AGENT_TOOLS


def test_the_rule_brain_s_acts_are_the_table_s_and_its_own_three() -> None:
    # reply, sleep, and wait_for (a gate a test opens: the turn holds until a file exists)
    assert set(ACTS) == {"reply", "sleep", "wait_for", *ACTIONS}


async def test_the_deferred_recorder_takes_each_action_as_the_table_defines_it() -> None:
    deferred = DeferredActions()
    for name, action in ACTIONS.items():
        await deferred.act(name, _sample(action))
    assert deferred.calls == [(name, _sample(action)) for name, action in ACTIONS.items()]


def test_the_wire_carries_exactly_the_table_s_actions() -> None:
    for name, action in ACTIONS.items():
        assert ActionCall(name=name, arguments=_sample(action)).name == name


def test_the_hub_has_a_method_per_action_with_the_table_s_parameters() -> None:
    methods = {
        name
        for name, member in inspect.getmembers(RunActing, inspect.iscoroutinefunction)
        if not name.startswith("_") and name not in ("act", "for_token")
    }
    assert methods == set(AGENT_TOOLS)
    for name in AGENT_TOOLS:
        _assert_takes_the_table_s_parameters(getattr(RunActing, name), ACTIONS[name])


def test_the_workspace_tools_have_a_method_per_tool_with_the_table_s_parameters() -> None:
    methods = {
        name
        for name, member in inspect.getmembers(WorkspaceTools, inspect.iscoroutinefunction)
        if not name.startswith("_")
    }
    assert methods == set(WORKSPACE_TOOLS)
    for name in WORKSPACE_TOOLS:
        _assert_takes_the_table_s_parameters(getattr(WorkspaceTools, name), ACTIONS[name])


def _assert_takes_the_table_s_parameters(method: Any, action: Action) -> None:
    """Each parameter by name, type and default (a flag's false, an optional path's ".")."""
    taken = [
        (p.name, p.annotation, None if p.default is inspect.Parameter.empty else p.default)
        for p in inspect.signature(method, eval_str=True).parameters.values()
        if p.name != "self"
    ]
    table = [(p.name, p.kind.python_type, p.default) for p in action.params]
    assert taken == table, action.name


def test_the_api_has_a_route_per_action_with_the_table_s_body(tmp_path: Any) -> None:
    spec = create_app(Settings(data_dir=tmp_path)).openapi()
    routes = {path for path in spec["paths"] if path.startswith("/api/v1/act/")}
    # And the turn's input, which is read, not done; and asking before a call, which its node
    # does, not the model (api/approvals.py).
    expected = {f"/api/v1/act/{action.path}" for action in ACTIONS.values()}
    asking = {"/api/v1/act/approvals", "/api/v1/act/approvals/{approval_id}"}
    assert routes == expected | {"/api/v1/act/input"} | asking
    assert list(spec["paths"]["/api/v1/act/input"]) == ["get"]
    schemas = spec["components"]["schemas"]
    for action in ACTIONS.values():
        post = spec["paths"][f"/api/v1/act/{action.path}"]["post"]
        ref = post["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        body = schemas[ref.rsplit("/", 1)[1]]
        required = set(body.get("required", []))
        offered = {
            name: (field["type"], name in required) for name, field in body["properties"].items()
        }
        assert offered == _params(action)
        assert body["additionalProperties"] is False


def test_parley_act_has_a_command_per_action_with_the_table_s_arguments() -> None:
    group = typer.main.get_command(act.app)
    assert isinstance(group, TyperGroup)
    assert list(group.commands) == [
        *(action.path for action in ACTIONS.values()),
        "input",
        "mcp-config",
    ]
    for action in ACTIONS.values():
        offered = {}
        for param in group.commands[action.path].params:
            if isinstance(param, TyperArgument):
                offered[param.name] = ("string", param.required)  # text, paths, names
            elif isinstance(param, TyperOption) and param.name not in ("as_json", "verbose"):
                assert param.is_flag
                offered[param.name] = ("boolean", False)
        assert offered == _params(action), action.name
