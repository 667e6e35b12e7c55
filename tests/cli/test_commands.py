"""Every CLI verb, through the HTTP API of a running server, with --json for scripts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.served import Served


def ok_json(served: Served, *args: str, token: str | None = None) -> Any:
    result = served.run(*args, "--json", token=token)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_person_add_prints_a_token_that_works(served: Served) -> None:
    created = ok_json(served, "person", "add", "ada", "--member")
    assert created["person"] == {**created["person"], "name": "ada", "role": "member"}
    people = ok_json(served, "person", "list", token=created["token"])
    assert [p["name"] for p in people["items"]] == ["ada", "owner"]  # by name


def test_person_add_in_words_shows_the_token_once(served: Served) -> None:
    result = served.run("person", "add", "bea", "--owner")
    assert result.exit_code == 0
    assert "added owner bea" in result.stdout
    assert "pk_" in result.stdout


def test_person_add_needs_exactly_one_role(served: Served) -> None:
    for flags in ([], ["--owner", "--member"]):
        result = served.run("person", "add", "ada", *flags)
        assert result.exit_code == 2
        assert "exactly one of --owner or --member" in result.stderr


def test_node_list_and_engram(served: Served) -> None:
    nodes = ok_json(served, "node", "list")["items"]
    assert [(n["name"], n["status"], n["agents"], n["running"]) for n in nodes] == [
        ("local", "online", 0, 0)
    ]
    assert nodes[0]["last_seen_at"]
    ok_json(served, "node", "engram", "local", "patient and precise")
    assert ok_json(served, "node", "show", "local")["engram"] == "patient and precise"
    table = served.run("node", "list")
    assert "local" in table.stdout and "online" in table.stdout


def test_agent_lifecycle_through_the_cli(served: Served) -> None:
    hired = ok_json(
        served,
        "agent",
        "hire",
        "scribe",
        "--node",
        "local",
        "--engram",
        "notes",
        "--max-sessions",
        "2",
    )
    assert (hired["lifecycle"], hired["max_sessions"]) == ("active", 2)
    assert [a["name"] for a in ok_json(served, "agent", "list")["items"]] == [
        "node:local",
        "scribe",
    ]
    assert ok_json(served, "agent", "show", "scribe")["engram"] == "notes"
    ok_json(served, "agent", "remember", "scribe", "prefers bullet points")
    memory = ok_json(served, "agent", "memory", "scribe")["items"]
    assert [(m["note"], m["origin"]) for m in memory] == [("prefers bullet points", "person owner")]
    assert "person owner" in served.run("agent", "memory", "scribe").stdout
    ok_json(served, "agent", "remember", "scribe", "a note to take back")
    taken_back = ok_json(served, "agent", "memory", "scribe")["items"][0]
    forgot = served.run("agent", "forget", "scribe", str(taken_back["id"]))
    assert forgot.exit_code == 0 and f"no longer remembers note {taken_back['id']}" in forgot.stdout
    again = served.run("agent", "forget", "scribe", str(taken_back["id"]))
    assert again.exit_code == 3 and "has no memory note" in again.output
    assert [m["note"] for m in ok_json(served, "agent", "memory", "scribe")["items"]] == [
        "prefers bullet points"
    ]
    warned = ok_json(served, "agent", "warn", "scribe", "--reason", "late")
    assert (warned["warnings"], warned["dismissed"]) == (1, False)
    assert [w["reason"] for w in ok_json(served, "agent", "warnings", "scribe")["items"]] == [
        "late"
    ]
    retired = ok_json(served, "agent", "retire", "scribe", "--reason", "done")
    assert (retired["lifecycle"], retired["retired_reason"]) == ("retired", "done")
    only_retired = ok_json(served, "agent", "list", "--lifecycle", "retired")
    assert [a["name"] for a in only_retired["items"]] == ["scribe"]


def test_warn_at_the_limit_dismisses(served: Served) -> None:
    ok_json(served, "agent", "hire", "scribe", "--node", "local")
    served.run("agent", "warn", "scribe", "--reason", "one")
    result = served.run("agent", "warn", "scribe", "--reason", "two")
    assert result.exit_code == 0
    assert "scribe: warning 2; now dismissed" in result.stdout


def test_force_retire(served: Served) -> None:
    ok_json(served, "agent", "hire", "scribe", "--node", "local")
    assert ok_json(served, "agent", "retire", "scribe", "--force")["lifecycle"] == "retired"


def test_templates_and_clones(served: Served) -> None:
    template = ok_json(
        served,
        "agent", "hire", "helper", "--node", "local", "--template",
        "--surge-threshold", "3", "--clone-lifetime", "45m",
    )  # fmt: skip
    assert (template["template"], template["clone_lifetime"]) == (True, "45m")
    clone = ok_json(served, "agent", "clone", "helper")
    assert (clone["name"], clone["clone_of"], clone["lifecycle"]) == (
        "helper-1",
        "helper",
        "active",
    )
    named = ok_json(served, "agent", "clone", "helper", "--name", "aide", "--lifetime", "2h")
    assert named["name"] == "aide"


def test_agent_variables_are_set_by_name_and_value_and_shown_by_name(served: Served) -> None:
    hired = ok_json(
        served, "agent", "hire", "coder", "--node", "local", "--env", "APP_MODE=fast",
        "--env-from-server", "APP_REGION",
    )  # fmt: skip
    assert (hired["env"], hired["env_from_server"]) == (["APP_MODE"], ["APP_REGION"])
    # NAME alone: the value of this command's own environment, kept off the command line.
    result = served.run(
        "agent", "set", "coder", "--env", "APP_KEY", "--unset-env", "APP_MODE",
        env={"APP_KEY": "sk-typed-secret"},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "sk-typed-secret" not in result.stdout
    assert "env              APP_KEY" in result.stdout
    assert "env_from_server  APP_REGION" in result.stdout
    missing = served.run("agent", "set", "coder", "--env", "APP_ABSENT")
    assert missing.exit_code == 2
    assert "--env APP_ABSENT: give NAME=VALUE, or set APP_ABSENT in your environment" in (
        missing.stderr
    )
    refused = served.run("agent", "set", "coder", "--env", "PARLEY_TOKEN=x")
    assert refused.exit_code == 2 and "PARLEY_* variables are the run's own" in refused.stderr


def test_human_agent(served: Served) -> None:
    ok_json(served, "person", "add", "ada", "--member")
    agent = ok_json(served, "agent", "hire", "ada-desk", "--node", "local", "--human", "ada")
    assert (agent["modality"], agent["human"]) == ("human", "ada")


def test_reassign_to_an_unknown_node_exits_3(served: Served) -> None:
    ok_json(served, "agent", "hire", "scribe", "--node", "local")
    result = served.run("agent", "reassign", "scribe", "--node", "mars")
    assert result.exit_code == 3
    assert result.stderr.strip() == "error: no node named 'mars'"


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["agent", "hire", "Bad Name", "--node", "local"], 2, "agent name 'Bad Name' is invalid"),
        (["agent", "hire", "x", "--node", "local", "--brain", "gpt"], 2, "is not a brain spec"),
        (["agent", "hire", "x", "--node", "local", "--max-sessions", "0"], 2, "between 1 and"),
        (["agent", "show", "ghost"], 3, "no agent named 'ghost'"),
        (["agent", "retire", "node:local"], 4, "cannot be retired"),
        (["agent", "clone", "node:local"], 4, "not a template"),
    ],
)
def test_errors_have_a_message_and_an_exit_code(
    served: Served, args: list[str], code: int, says: str
) -> None:
    result = served.run(*args)
    assert result.exit_code == code, result.output
    assert says in result.stderr


def test_a_member_is_told_no_with_exit_5(served: Served) -> None:
    token = ok_json(served, "person", "add", "ada", "--member")["token"]
    result = served.run("agent", "hire", "scribe", "--node", "local", token=token)
    assert result.exit_code == 5
    assert "only an owner may hire agents; ada is a member" in result.stderr


def test_a_bad_token_exits_5(served: Served) -> None:
    result = served.run("agent", "list", token="pk_wrong")
    assert result.exit_code == 5
    assert "this API token is not known here" in result.stderr


def test_an_unreachable_server_exits_6(served: Served) -> None:
    dead = Served(url="http://127.0.0.1:9", owner_token=served.owner_token)
    result = dead.run("agent", "list")
    assert result.exit_code == 6
    assert "cannot reach Parley at http://127.0.0.1:9" in result.stderr


def test_person_token_reissues(served: Served) -> None:
    old = ok_json(served, "person", "add", "ada", "--member")["token"]
    new = ok_json(served, "person", "token", "ada")["token"]
    assert served.run("person", "list", token=old).exit_code == 5
    assert served.run("person", "list", token=new).exit_code == 0
