"""Where Parley is when nothing says otherwise: the settings' defaults that the CLI needs
without loading the settings themselves (whose library costs more than a whole command)."""

from __future__ import annotations

from pathlib import Path

DATA_DIR = Path("parley-data")
HOST = "127.0.0.1"
PORT = 8700
