"""Test certificates made at test time with the openssl command (no key is committed)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def make_certificate(directory: Path, name: str = "server",
                     hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> tuple[Path, Path]:
    """A self-signed EC certificate naming ``hosts`` (IP or DNS names) and its key, as PEM
    files ``name.pem`` and ``name.key`` in ``directory``; skips when openssl is absent."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a test certificate")
    cert, key = directory / f"{name}.pem", directory / f"{name}.key"
    names = ",".join(("IP:" if host[0].isdigit() else "DNS:") + host for host in hosts)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "2", "-subj", f"/CN={hosts[0]}", "-addext",
                    f"subjectAltName={names}"], check=True, capture_output=True)
    return cert, key
