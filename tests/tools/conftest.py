"""Each file tool test runs twice: with openat2, and with the fallback for kernels without it."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.tools import paths
from tests.tools.support import Place


@pytest.fixture(params=["openat2", "fallback"])
def place(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Place:
    if request.param == "fallback":
        monkeypatch.setattr(paths, "openat2_works", lambda: False)
    else:
        assert paths.openat2_works(), "this kernel has openat2: the tests expect to use it"
    workspace, sibling = tmp_path / "workspace", tmp_path / "sibling"
    workspace.mkdir()
    sibling.mkdir()
    (sibling / "secret.txt").write_text("the sibling's secret\n")
    return Place(workspace, sibling)
