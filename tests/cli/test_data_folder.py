"""The data folder as `parley serve` holds it: one server per folder, and an older folder's
files moved into its private part at the first start, the CLI finding the owner token all along."""

from __future__ import annotations

import json
from pathlib import Path

from bench.ports import free_port
from parley.datafolder import DataFolder
from tests.cli.test_serve import cli, serving
from tests.runs.test_serve_restart import _api
from tests.support import until


def test_a_second_server_on_the_same_data_folder_refuses_to_start_and_names_the_first(
    tmp_path: Path,
) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text("otherwise: [{sleep: 60}]")
    port, other_port = free_port(), free_port()
    with serving(tmp_path, port) as first:
        token = (tmp_path / "parley-data" / "private" / "owner-token").read_text().strip()
        with _api(port, token) as api:
            hired = api.post(
                "/agents", json={"name": "solo", "node": "local", "brain": f"scripted:{rules}"}
            )
            assert hired.status_code == 201, hired.text
            sent = api.post("/conversations/solo/messages", json={"text": "work"}).json()
            run = f"/runs/{sent['run_id']}"
            assert until(lambda: api.get(run).json()["run"]["state"] == "running", within=20)

            second = cli(tmp_path, None, "serve", "--port", str(other_port))

            assert second.returncode == 6
            assert second.stderr.splitlines() == [
                f"error: another Parley server (pid {first.pid}, http://127.0.0.1:{port}) is"
                f" running on the data folder parley-data; stop it first, or give this one"
                f" another --data-dir"
            ]
            assert api.get(run).json()["run"]["state"] == "running"  # untouched by the second
    # The lock dies with its holder: the next start after a stop just works.
    with serving(tmp_path, other_port), _api(other_port, token) as api:
        assert api.get("/agents/solo").status_code == 200


def test_an_older_data_folder_is_moved_into_private_and_the_cli_finds_the_token_throughout(
    tmp_path: Path,
) -> None:
    port = free_port()
    data = tmp_path / "parley-data"
    with serving(tmp_path, port):
        assert cli(tmp_path, port, "agent", "hire", "scribe", "--node", "local").returncode == 0
    for name in ("parley.db", "parley.db-wal", "parley.db-shm", "owner-token"):
        if (data / "private" / name).exists():  # where an older Parley kept them
            (data / "private" / name).rename(data / name)
    (data / "private" / "server.lock").unlink()
    (data / "private" / "web-secret").unlink()  # an older Parley had no web page
    (data / "private" / "brains").rmdir()
    (data / "private").rmdir()
    (data / "join-token").write_text("pj_retired\n")  # the mesh's join token, before node creds
    token, join_token = (data / "owner-token").read_text(), (data / "join-token").read_text()

    with serving(tmp_path, port) as server:
        shown = cli(tmp_path, port, "agent", "show", "scribe", "--json")
        # Where an older Parley left it, the CLI reads the token too (until that folder's
        # next start moves it).
        (data / "private" / "owner-token").rename(data / "owner-token")
        shown_again = cli(tmp_path, port, "agent", "show", "scribe")
        (data / "owner-token").rename(data / "private" / "owner-token")
    log = server.stdout.read() if server.stdout else ""

    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["lifecycle"] == "active"  # the store came along
    assert shown_again.returncode == 0, shown_again.stderr
    assert "moved parley-data/parley.db to parley-data/private/parley.db" in log
    assert not (data / "owner-token").exists() and not (data / "parley.db").exists()
    assert (data / "private" / "owner-token").read_text() == token
    assert (data / "private" / "join-token").read_text() == join_token
    assert (data / "private").stat().st_mode & 0o777 == 0o700


def test_a_store_named_by_its_url_stays_where_it_is(tmp_path: Path) -> None:
    folder = DataFolder(tmp_path / "parley-data")
    folder.root.mkdir()
    for name in ("parley.db", "owner-token"):
        (folder.root / name).write_text(name)
    folder.prepare(default_store=False)  # database_url = sqlite:///parley-data/parley.db, say
    assert (folder.root / "parley.db").read_text() == "parley.db"
    assert not folder.database.exists()
    assert folder.owner_token.read_text() == "owner-token"


def test_a_data_folder_that_cannot_be_used_is_a_plain_error(tmp_path: Path) -> None:
    (tmp_path / "not-a-folder").write_text("")
    result = cli(tmp_path, None, "serve", "--data-dir", "not-a-folder")
    assert result.returncode == 6
    assert result.stderr.startswith("error: cannot use the data folder not-a-folder: ")
