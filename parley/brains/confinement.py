"""What a node's command brains may reach, and how their launcher is started with it.

The node hides its data folder's private part, its configuration file and the paths its settings
name (``hidden_from_brains``: a node's credentials file among them) from every brain, and
keeps Parley's own installation read-only to them (a brain that could rewrite the server's code
would read everything at the next start). Run as root, a brain also loses every capability and
cannot read raw disks or memory. The mechanism is in ``launcher.py``.

Landlock grants a folder's rights to everything beneath it, so the folders above a hidden path
(the data folder, and maybe the system's temporary folder or ``$HOME`` above it) take no new
entries: what is in them stays open, but nothing can be made directly in them. So each turn
gets a temporary folder of its own (``TMPDIR``), made for the turn and removed after it, in the
data folder's ``tmp/``, which is hidden from brains but for each one's own folder.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import stat
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from parley.brains import launcher
from parley.datafolder import DataFolder
from parley.errors import Unavailable
from parley.settings import Settings, config_file

LAUNCHER = Path(launcher.__file__).resolve()
PARLEY_PACKAGE = Path(__file__).resolve().parent.parent
_ROOT_ONLY_DEVICES = ("/dev/mem", "/dev/kmem", "/dev/port")


@dataclass(frozen=True)
class ProcessPolicy:
    """How this node starts command brains. The defaults confine without hiding anything."""

    confine: bool = True
    hidden: tuple[Path, ...] = ()
    read_only: tuple[Path, ...] = ()
    # Where the process group of each running turn is recorded (None: not recorded).
    groups: Path | None = None
    # Put first on the brain's PATH, so that `parley act …` is this Parley.
    parley_bin: Path | None = None
    server_environment: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    # Where each turn's temporary folder is made (None: the system's temporary folder).
    run_temp: Path | None = None

    def launcher_argv(self, command: list[str], own: Sequence[Path] = ()) -> list[str]:
        """The launcher's command line for ``command``; ``own``: paths this turn may change
        whatever is hidden around them (its temporary folder)."""
        if self.confine and landlock_abi() < 1:
            raise Unavailable(
                "command brains run confined by Landlock, which this kernel does not offer"
                " (Linux 5.13 or later with Landlock enabled); set confine_brains = false to"
                " run them unconfined"
            )
        policy = {
            "parent": os.getpid(),
            "confine": self.confine,
            "hidden": [str(path) for path in self.hidden],
            "read_only": [str(path) for path in self.read_only],
            "own": [str(path) for path in own],
            "drop_capabilities": os.geteuid() == 0,
        }
        return [sys.executable, "-I", "-S", str(LAUNCHER), json.dumps(policy), *command]


def node_policy(settings: Settings) -> ProcessPolicy:
    """The policy of the node this process hosts: its data folder, its configuration, and
    whatever else its settings hide (``hidden_from_brains``)."""
    folder = DataFolder(settings.data_dir)
    folder.run_temp.mkdir(mode=0o700, parents=True, exist_ok=True)
    # Each turn's temporary folder is its own: the others' are hidden from it.
    hidden = [folder.private, config_file(), folder.run_temp]
    hidden += [path.expanduser() for path in settings.hidden_from_brains]
    if os.geteuid() == 0:
        hidden += _raw_devices()
    return ProcessPolicy(
        confine=settings.confine_brains,
        hidden=_existing(hidden),
        read_only=_existing(_installation()),
        groups=folder.brain_groups,
        parley_bin=parley_bin(),
        run_temp=folder.run_temp.resolve(),
    )


def hiding_from_brains(settings: Settings, *paths: Path) -> Settings:
    """``settings`` with ``paths`` hidden from command brains too: a secret this process read
    from a file of its own choosing (a node's credentials given by path) stays out of reach."""
    hidden = (*settings.hidden_from_brains, *(path.resolve() for path in paths))
    return settings.model_copy(update={"hidden_from_brains": hidden})


@functools.cache
def landlock_abi() -> int:
    return launcher.landlock_abi()


def parley_bin() -> Path | None:
    """The folder of this interpreter's ``parley`` command (the virtualenv's bin)."""
    here = Path(sys.executable).parent
    if (here / "parley").exists():
        return here
    found = shutil.which("parley")
    return Path(found).parent if found else None


def _installation() -> Iterator[Path]:
    yield PARLEY_PACKAGE  # the source tree itself, for an editable install
    if sys.prefix != sys.base_prefix:  # a virtualenv: Parley and everything it imports
        yield Path(sys.prefix)


def _raw_devices() -> Iterator[Path]:
    """Block devices and raw memory: root could read any file's bytes through them."""
    for entry in os.scandir("/dev"):
        if stat.S_ISBLK(entry.stat(follow_symlinks=False).st_mode):
            yield Path(entry.path)
    yield from map(Path, _ROOT_ONLY_DEVICES)


def _existing(paths: Iterator[Path] | list[Path]) -> tuple[Path, ...]:
    # The launcher carves rules out of real paths: symbolic links resolved, absent ones dropped.
    return tuple(dict.fromkeys(path.resolve() for path in paths if path.exists()))
