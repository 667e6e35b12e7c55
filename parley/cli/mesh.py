"""parley mesh …: the mesh's broker, set up on the hub's machine."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from parley.cli.output import reporting_errors

if TYPE_CHECKING:
    from parley.mesh.broker_config import TlsFiles

app = typer.Typer(help="The mesh: its broker's set-up.", no_args_is_help=True)


@app.command("broker-config")
def broker_config(
    out: Path = typer.Option(..., "--out", help="the folder for nats-server.conf (and jwt/)"),
    listen: str = typer.Option(
        "0.0.0.0:4222", "--listen", help="HOST:PORT where the broker listens for the mesh"
    ),
    tls_cert: Path | None = typer.Option(None, "--tls-cert", help="the broker's certificate"),
    tls_key: Path | None = typer.Option(None, "--tls-key", help="its private key"),
    tls_ca: Path | None = typer.Option(
        None,
        "--tls-ca",
        help="a CA: every client must then show a certificate it signed (mutual TLS)",
    ),
    jetstream_dir: Path | None = typer.Option(
        None, "--jetstream-dir", help="where the broker stores messages; default OUT/jetstream"
    ),
    data_dir: Path | None = typer.Option(
        None, "--data-dir", help="the hub's; default ./parley-data [PARLEY_DATA_DIR]"
    ),
) -> None:
    """Write the configuration of a nats-server that lets in only the hub and the nodes it
    gave credentials to (`parley node add`), each to its own subjects. The broker's keys are
    made in the hub's data folder the first time and kept: running this again (to change the
    address or the certificates) keeps every node's credentials valid. The file holds no
    secret."""
    from parley.settings import load_settings

    with reporting_errors():
        settings = load_settings(data_dir=data_dir)
        tls = _tls_files(tls_cert, tls_key, tls_ca)
        config = _written(settings.data_dir, out, listen, tls, jetstream_dir)
    typer.echo(
        f"wrote {config} (no secret in it: the keys stay in {_keys_folder(settings.data_dir)})"
    )
    typer.echo(f"start the broker with: nats-server -c {config}")
    scheme = "tls" if tls is not None else "nats"
    typer.echo(
        f"then the hub with: parley serve --broker {scheme}://HOST:{listen.rpartition(':')[2]}"
    )


def _keys_folder(data_dir: Path) -> Path:
    from parley.datafolder import DataFolder
    from parley.mesh.broker_auth import keys_folder

    return keys_folder(DataFolder(data_dir.resolve()))


def _tls_files(cert: Path | None, key: Path | None, ca: Path | None) -> TlsFiles | None:
    from parley.errors import Invalid
    from parley.mesh.broker_config import TlsFiles

    if cert is None and key is None and ca is None:
        return None
    if cert is None or key is None:
        raise Invalid("TLS needs both --tls-cert and --tls-key")
    return TlsFiles(cert, key, ca).check()


def _written(
    data_dir: Path, out: Path, listen: str, tls: TlsFiles | None, jetstream_dir: Path | None
) -> Path:
    from parley.datafolder import DataFolder
    from parley.errors import Invalid
    from parley.mesh.broker_auth import BrokerKeys
    from parley.mesh.broker_config import check_listen, write_server_config

    check_listen(listen)
    folder = DataFolder(data_dir)
    try:
        keys = BrokerKeys.load_or_create(folder)
    except OSError as exc:
        raise Invalid(f"cannot make the broker's keys in {folder.private}: {exc.strerror}") from exc
    try:
        return write_server_config(keys, out, listen=listen, tls=tls, jetstream_dir=jetstream_dir)
    except OSError as exc:
        where = exc.filename or out
        raise Invalid(f"cannot write {where}: {exc.strerror}; choose another --out") from exc
