"""parley mesh broker-config: a nats-server configuration from the hub's keys, made once."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from parley.cli.main import app as cli_app
from parley.datafolder import DataFolder
from parley.mesh.broker_auth import BrokerKeys


def broker_config(data: Path, *args: str) -> Result:
    return CliRunner().invoke(
        cli_app, ["mesh", "broker-config", "--data-dir", str(data), *args], env={"COLUMNS": "200"}
    )


def test_it_writes_the_file_and_says_how_to_start_the_broker(tmp_path: Path) -> None:
    data, out = tmp_path / "data", tmp_path / "broker"
    result = broker_config(data, "--out", str(out), "--listen", "127.0.0.1:4333")
    assert result.exit_code == 0, result.output
    config = out / "nats-server.conf"
    assert f"nats-server -c {config}" in result.stdout
    assert "parley serve --broker nats://HOST:4333" in result.stdout
    keys = BrokerKeys.load(DataFolder(data))
    assert keys is not None and f"system_account: {keys.system_account}" in config.read_text()

    again = broker_config(data, "--out", str(out), "--listen", "127.0.0.1:4444")
    assert again.exit_code == 0, again.output
    assert BrokerKeys.load(DataFolder(data)) == keys  # the same keys: nodes' credentials hold
    assert '"127.0.0.1:4444"' in config.read_text()


def test_with_certificates_the_hub_is_told_tls(tmp_path: Path) -> None:
    cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
    cert.write_text("x")
    key.write_text("x")
    result = broker_config(
        tmp_path / "data",
        "--out",
        str(tmp_path / "b"),
        "--tls-cert",
        str(cert),
        "--tls-key",
        str(key),
    )
    assert result.exit_code == 0, result.output
    assert "parley serve --broker tls://HOST:4222" in result.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--listen", "nowhere"], "--listen 'nowhere' is not HOST:PORT"),
        (["--tls-cert", "missing.pem", "--tls-key", "k.pem"], "TLS certificate file missing.pem"),
        (["--tls-key", "k.pem"], "TLS needs both --tls-cert and --tls-key"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], said: str) -> None:
    result = broker_config(tmp_path / "data", "--out", str(tmp_path / "b"), *args)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and said in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_an_unwritable_folder_is_one_line_and_exit_2(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = broker_config(tmp_path / "data", "--out", str(blocker / "broker"))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: cannot write {blocker / 'broker'}")
    assert len(result.stderr.strip().splitlines()) == 1
