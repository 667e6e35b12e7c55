"""The mesh's nats-server configuration: trust the hub's operator, know both accounts, keep
JetStream, speak TLS when given certificates. It holds public JWTs only — no secret — so it can
be read by whoever runs the server."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from parley.errors import Invalid
from parley.mesh.broker_auth import BrokerKeys

CONFIG_NAME = "nats-server.conf"
MAX_MEMORY_STORE = "1G"  # JetStream's limits for the whole server
MAX_FILE_STORE = "10G"
TLS_TIMEOUT = 2  # seconds for a client's TLS handshake


@dataclass(frozen=True)
class TlsFiles:
    cert: Path
    key: Path
    ca: Path | None = None  # given: clients must show a certificate signed by it

    def check(self) -> TlsFiles:
        for kind, path in (("certificate", self.cert), ("key", self.key), ("CA", self.ca)):
            if path is not None and not path.is_file():
                raise Invalid(f"the TLS {kind} file {path} does not exist")
        return self


def check_listen(listen: str) -> str:
    """``HOST:PORT`` (``[::]:4222`` for IPv6), else Invalid."""
    host, colon, port = listen.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise Invalid(f"--listen {listen!r} is not HOST:PORT (e.g. 0.0.0.0:4222)")
    return listen


def write_server_config(
    keys: BrokerKeys,
    out_dir: Path,
    *,
    listen: str = "0.0.0.0:4222",
    tls: TlsFiles | None = None,
    jetstream_dir: Path | None = None,
) -> Path:
    """Write ``out_dir/nats-server.conf`` (and ``out_dir/jwt/``, where the server keeps the
    accounts' JWTs); returns its path."""
    check_listen(listen)
    out_dir = out_dir.resolve()
    resolver_dir = out_dir / "jwt"
    resolver_dir.mkdir(parents=True, exist_ok=True)
    store = (jetstream_dir or out_dir / "jetstream").resolve()
    lines = [
        "# The mesh's broker, written by `parley mesh broker-config`: public JWTs only, no secret.",
        "# Start it with: nats-server -c " + str(out_dir / CONFIG_NAME),
        f"listen: {_quoted(listen)}",
        f"operator: {_quoted(keys.operator_jwt())}",
        f"system_account: {keys.system_account}",
        "resolver: {",
        "  type: full",
        f"  dir: {_quoted(str(resolver_dir))}",
        "  allow_delete: false",
        "}",
        "resolver_preload: {",
        f"  {keys.system_account}: {_quoted(keys.system_account_jwt())}",
        f"  {keys.account}: {_quoted(keys.configured_account_jwt())}",
        "}",
        "jetstream: {",
        f"  store_dir: {_quoted(str(store))}",
        f"  max_memory_store: {MAX_MEMORY_STORE}",
        f"  max_file_store: {MAX_FILE_STORE}",
        "}",
        *(_tls_block(tls) if tls is not None else []),
    ]
    path = out_dir / CONFIG_NAME
    path.write_text("\n".join(lines) + "\n")
    return path


def _tls_block(tls: TlsFiles) -> list[str]:
    block = [
        "tls: {",
        f"  cert_file: {_quoted(str(tls.cert.resolve()))}",
        f"  key_file: {_quoted(str(tls.key.resolve()))}",
    ]
    if tls.ca is not None:
        block += [f"  ca_file: {_quoted(str(tls.ca.resolve()))}", "  verify: true"]
    return [*block, f"  timeout: {TLS_TIMEOUT}", "}"]


def _quoted(value: str) -> str:
    """A string as the server's configuration reads it (its syntax takes JSON's strings)."""
    return json.dumps(value)
