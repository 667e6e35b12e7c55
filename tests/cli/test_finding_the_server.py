"""`parley serve` says where it listens, on its output and in the data folder; the CLI, run
from the same place, follows it. --url beats PARLEY_URL beats that file beats the settings."""

from __future__ import annotations

from pathlib import Path

import httpx

import parley
from bench.ports import free_port
from tests.cli.test_serve import cli, serving


def test_the_cli_finds_a_server_on_another_port_by_itself(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    announced = tmp_path / "parley-data" / "private" / "server-url"
    with serving(tmp_path, port) as server:
        listed = cli(tmp_path, None, "node", "list")  # no --url, no PARLEY_URL, no PARLEY_PORT
        written = announced.read_text()
        mode = announced.stat().st_mode & 0o777
    log = server.stdout.read() if server.stdout else ""

    assert listed.returncode == 0, listed.stderr
    assert "local" in listed.stdout
    assert written == url + "\n" and mode == 0o600
    assert f"Parley listens on {url} (the page: {url}/, API docs: {url}/docs)" in log.splitlines()
    assert not announced.exists()  # a clean stop takes it away: the settings speak again
    nobody = free_port()
    gone = cli(tmp_path, nobody, "node", "list")
    assert gone.returncode == 6
    assert f"cannot reach Parley at http://127.0.0.1:{nobody}" in gone.stderr


def test_url_and_parley_url_come_before_the_announced_url(tmp_path: Path) -> None:
    port, nobody = free_port(), free_port()
    with serving(tmp_path, port):
        by_env = cli(
            tmp_path, None, "node", "list", env={"PARLEY_URL": f"http://127.0.0.1:{nobody}"}
        )
        by_option = cli(
            tmp_path,
            None,
            "--url",
            f"http://127.0.0.1:{port}",
            "node",
            "list",
            env={"PARLEY_URL": f"http://127.0.0.1:{nobody}"},
        )
    assert by_env.returncode == 6
    assert f"cannot reach Parley at http://127.0.0.1:{nobody}" in by_env.stderr
    assert by_option.returncode == 0, by_option.stderr


def test_the_root_says_what_answers_there_without_a_token(tmp_path: Path) -> None:
    port = free_port()
    with serving(tmp_path, port):
        page = httpx.get(f"http://127.0.0.1:{port}/", follow_redirects=True)
        docs = httpx.get(f"http://127.0.0.1:{port}/openapi.json")
    assert page.status_code == 200 and page.url.path == "/signin"
    assert page.headers["content-type"].startswith("text/html")
    assert f"Parley {parley.__version__}" in page.text
    assert 'href="/docs"' in page.text and 'href="/openapi.json"' in page.text
    assert "/" not in docs.json()["paths"]  # not an API route


def test_a_data_folder_named_by_a_setting_is_where_the_cli_looks_too(tmp_path: Path) -> None:
    port, elsewhere = free_port(), {"PARLEY_DATA_DIR": "elsewhere"}
    with serving(tmp_path, port, elsewhere):
        found = cli(tmp_path, None, "node", "list", env=elsewhere)
        lost = cli(tmp_path, None, "node", "list")  # ./parley-data: no token there
    assert (tmp_path / "elsewhere" / "private" / "owner-token").exists()
    assert found.returncode == 0, found.stderr
    assert lost.returncode == 5 and "no API token" in lost.stderr
