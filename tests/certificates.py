"""A self-signed certificate for a test's TLS server, for the names it is asked for (DNS names
or IP addresses), made with the cryptography package (the test is skipped without it)."""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path
from typing import Any

import pytest


def self_signed(
    folder: Path, names: tuple[str, ...] = ("localhost", "127.0.0.1"), stem: str = "server"
) -> tuple[Path, Path]:
    """``stem.crt`` and ``stem.key`` in ``folder``: a certificate for ``names`` that is its own
    authority (trusted, it trusts itself), and its key."""
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        pytest.skip("the cryptography package makes the test's certificate; it is not here")
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([_alt(x509, n) for n in names]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / f"{stem}.crt", folder / f"{stem}.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def _alt(x509: Any, name: str) -> Any:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)
