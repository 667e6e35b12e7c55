"""A Parley process's secrets, against real processes and the kernel: a protected process's
environment cannot be read through /proc by another process of its user without capabilities
(a brain's lot), and a secret taken from the environment is inherited by nothing it starts."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from parley.process_secrets import protect_process, take_env_secret

SECRET = "pnc_process-secret-4711"

# A process holding SECRET in its environment, protected or not (argv[1]), until its stdin ends.
# As root it first loses its capabilities, as a server run by any other user has none: a process
# holding capabilities the reader lacks is refused to it anyway (the kernel's ptrace check).
HOLDER = """
import os, sys
from parley.brains.launcher import _drop_capabilities
from parley.process_secrets import protect_process
if os.geteuid() == 0:
    _drop_capabilities()
if sys.argv[1] == "protected":
    protect_process()
print("ready", flush=True)
sys.stdin.read()
"""

# Another process of the same user, as a brain is: root loses every capability first. It prints
# what it read of the holder's environment, or the error it met.
READER = """
import os, sys
from parley.brains.launcher import _drop_capabilities
if os.geteuid() == 0:
    _drop_capabilities()
try:
    print(open(f"/proc/{sys.argv[1]}/environ", "rb").read().decode(errors="replace"))
except OSError as error:
    print(type(error).__name__)
"""

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's /proc")


@contextmanager
def holder(mode: str) -> Iterator[int]:
    env = dict(os.environ, HELD_SECRET=SECRET)
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, mode],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdin is not None
    try:
        assert process.stdout.readline().strip() == "ready"
        yield process.pid
    finally:
        process.stdin.close()
        process.wait(timeout=10)


def read_environment_of(pid: int) -> str:
    reader = [sys.executable, "-c", READER, str(pid)]
    return subprocess.run(reader, capture_output=True, text=True, check=True).stdout


def test_another_process_of_the_user_reads_an_unprotected_environment() -> None:
    # The control: without protection, the reader below does get the secret.
    with holder("unprotected") as pid:
        assert SECRET in read_environment_of(pid)


def test_a_protected_process_s_environment_is_refused_to_it() -> None:
    with holder("protected") as pid:
        seen = read_environment_of(pid)
    assert SECRET not in seen
    assert seen.strip() == "PermissionError"


def test_the_process_itself_is_not_hindered(tmp_path: object) -> None:
    # Non-dumpable, this process still starts programs and reads its own /proc entries.
    protect_process()  # this test's own process: harmless to the rest of the run
    assert os.listdir("/proc/self/fd")
    done = subprocess.run([sys.executable, "-c", "print('ran')"], capture_output=True, text=True)
    assert done.stdout.strip() == "ran"


def test_a_secret_taken_from_the_environment_is_inherited_by_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PARLEY_TEST_TAKEN", SECRET)
    assert take_env_secret("PARLEY_TEST_TAKEN") == SECRET
    assert "PARLEY_TEST_TAKEN" not in os.environ
    child = [sys.executable, "-c", "import os; print(os.environ.get('PARLEY_TEST_TAKEN'))"]
    assert subprocess.run(child, capture_output=True, text=True).stdout.strip() == "None"
    assert take_env_secret("PARLEY_TEST_TAKEN") is None
