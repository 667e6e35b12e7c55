"""The launcher of a command brain's process: it confines the brain and outlives it by nothing.

Run as ``python -I -S launcher.py POLICY_JSON PROGRAM ARGS…`` by the command brain, in a
process group of its own (it leads it). It imports nothing but the standard library, so that
it starts in a few milliseconds and can run before anything of Parley is importable. It:

- dies with the process that started it: its parent-death signal ends everything it started,
  and it checks once that this parent is still the one it was started by; the brain dies with
  the launcher alike, even when the launcher is killed outright;
- is a child subreaper, so that whatever the brain starts stays its descendant even after
  leaving the process group (``setsid``), and is killed when the brain's turn ends;
- starts the brain confined with Landlock (Linux ≥ 5.13): the paths of ``hidden`` are neither
  read nor changed, those of ``read_only`` only read and executed, those of ``own`` (its
  temporary folder, within a hidden one) are its to change, everything else is as usual.
  The brain cannot ptrace or (Landlock ABI ≥ 6) signal anything outside its confinement.
  As root it also loses every capability, and it can gain none (``no_new_privs``).

Signals: SIGTERM is the brain's (the whole group gets it on stop; the launcher waits for the
brain); SIGUSR1, also the parent-death signal, ends the brain and all it started at once.
Exit status: the brain's, or 126 when it could not be confined, 127 when it could not start.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import os
import signal
import stat
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

END_EVERYTHING = signal.SIGUSR1
CANNOT_CONFINE = 126
CANNOT_START = 127

# prctl(2)
_PR_SET_PDEATHSIG = 1
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_CHILD_SUBREAPER = 36
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4

# landlock(7): the three system calls share their numbers on every architecture
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

# Filesystem access rights, and the Landlock ABI version that introduced the later ones.
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_ABI1_RIGHTS = (1 << 13) - 1  # execute … make_sym
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
_READ_RIGHTS = _EXECUTE | _READ_FILE | _READ_DIR
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class CannotConfine(Exception):
    """Landlock is missing or refused the rules; the brain is not started."""


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def syscall(number: int, *args: object) -> int:
    call = _libc().syscall
    call.restype = ctypes.c_long
    # syscall(2) is variadic and reads each argument as a long: widen plain ints to one.
    widened = [ctypes.c_long(arg) if isinstance(arg, int) else arg for arg in args]
    result = int(call(ctypes.c_long(number), *widened))
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))
    return result


def _prctl(option: int, value: int = 0) -> None:
    prctl = _libc().prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    if prctl(option, value, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when it has none (or this is not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        return syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION)
    except OSError:
        return 0


# --- the rules -------------------------------------------------------------------------------


def _handled_rights(abi: int) -> int:
    rights = _ABI1_RIGHTS
    if abi >= 2:
        rights |= _REFER
    if abi >= 3:
        rights |= _TRUNCATE
    if abi >= 5:
        rights |= _IOCTL_DEV
    return rights


def _rules(path: Path, rights: int, exceptions: dict[Path, int]) -> Iterator[tuple[Path, int]]:
    """Rules giving everything beneath ``path`` ``rights``, except the exception paths.

    Landlock only grants, and a right granted on a directory holds for all beneath it; so an
    exception is carved out by granting each of its siblings instead of its parent, on every
    level from the root down. Directories on the way get no rule of their own (nothing can be
    made or removed directly in them). Symbolic links are skipped: what they point to is
    governed where it really is.
    """
    if not any(path in other.parents for other in exceptions):
        if rights:
            yield path, rights
        return
    try:
        children = list(os.scandir(path))
    except OSError:
        return
    for child in children:
        if not child.is_symlink():
            beneath = Path(child.path)
            yield from _rules(beneath, exceptions.get(beneath, rights), exceptions)


def _add_rule(ruleset: int, path: Path, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # gone meanwhile, or unreachable: it needs no rule
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= _FILE_RIGHTS
        if not rights:
            return
        attr = _PathBeneathAttr(allowed_access=rights, parent_fd=fd)
        syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(attr), 0)
    finally:
        os.close(fd)


def build_ruleset(hidden: Iterable[str], read_only: Iterable[str], own: Iterable[str] = ()) -> int:
    """A Landlock ruleset (its file descriptor): everything allowed but ``hidden`` (nothing) and
    ``read_only`` (read, list, execute), and ``own`` allowed even within a hidden path.
    Directories can be listed anywhere."""
    abi = landlock_abi()
    if abi < 1:
        raise CannotConfine("this kernel offers no Landlock (Linux 5.13 or later, enabled)")
    handled = _handled_rights(abi)
    scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL if abi >= 6 else 0
    attr = _RulesetAttr(handled_access_fs=handled, handled_access_net=0, scoped=scoped)
    size = 24 if abi >= 6 else 8  # older kernels refuse fields they do not know
    exceptions = {Path(path): _READ_RIGHTS & handled for path in read_only}
    exceptions |= {Path(path): 0 for path in hidden}
    # An own path needs a rule only within an exception: a rule of its own elsewhere would
    # close the folders above it to new entries.
    closed = list(exceptions)
    exceptions |= {
        Path(path): handled for path in own if any(c in Path(path).parents for c in closed)
    }
    try:
        ruleset = syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
        for path, rights in _rules(Path("/"), handled, exceptions):
            _add_rule(ruleset, path, rights)
        _add_rule(ruleset, Path("/"), _READ_DIR)
    except OSError as error:
        raise CannotConfine(f"Landlock refused the rules: {error}") from error
    return ruleset


def confine(ruleset: int, drop_capabilities: bool) -> None:
    """Apply the ruleset to this process (and all it will start); it can never be undone."""
    if drop_capabilities:
        _drop_capabilities()
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)
    syscall(_SYS_RESTRICT_SELF, ruleset, 0)


def _drop_capabilities() -> None:
    """Root without any capability, for good: none in the bounding set, none held."""
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    for capability in range(last + 1):
        _prctl(_PR_CAPBSET_DROP, capability)
    _prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable: twice, all zero
    capset = _libc().capset
    if capset(header, data) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


# --- the brain's lifetime --------------------------------------------------------------------


def _children() -> list[int]:
    me = str(os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat_line = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if stat_line.rsplit(")", 1)[1].split()[1] == me:  # field 4: the parent's pid
            found.append(int(entry))
    return found


def end_descendants() -> None:
    """Kill every descendant. As a subreaper this process inherits the children of each one it
    kills, so it repeats until none is left, however deep or detached they were."""
    while children := _children():
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        for child in children:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child, 0)


def _end_everything(*_: object) -> None:
    end_descendants()
    os._exit(128 + signal.SIGKILL)


def _start_brain(command: list[str], ruleset: int | None, drop_capabilities: bool) -> int:
    launcher = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    _dies_with(launcher)
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(END_EVERYTHING, signal.SIG_DFL)
        if ruleset is not None:
            confine(ruleset, drop_capabilities)
            os.close(ruleset)
    except OSError as error:
        os.write(2, f"parley: the brain could not be confined: {error}\n".encode())
        os._exit(CANNOT_CONFINE)
    try:
        os.execvp(command[0], command)
    except OSError as error:
        os.write(2, f"parley: cannot run {command[0]!r}: {error.strerror}\n".encode())
    os._exit(CANNOT_START)


def _dies_with(launcher: int) -> None:
    """The brain is killed when the launcher dies, even of SIGKILL, which the launcher cannot
    answer (asyncio kills it so when a start is cancelled before its pipes are joined): an
    orphaned brain would run on. It outlives a launcher that ends normally by nothing: the
    launcher waits for it first."""
    if not _parent_death_armed(launcher, signal.SIGKILL):
        os._exit(128 + signal.SIGKILL)


def _parent_death_armed(parent: int, death: signal.Signals) -> bool:
    """``death`` comes to this process when ``parent`` dies; False if it had died already,
    before the signal was armed (this process's parent is not ``parent`` anymore)."""
    if sys.platform.startswith("linux"):
        _prctl(_PR_SET_PDEATHSIG, death)
    return os.getppid() == parent


def _wait_for(brain: int) -> int:
    """The brain's wait status; orphans handed to this subreaper meanwhile are reaped too."""
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == brain:
            return status


def _exit_like(status: int) -> None:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        # SIGKILL's disposition cannot be set (nor needs to be): the launcher dies of it too.
        with contextlib.suppress(OSError):
            signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(os.waitstatus_to_exitcode(status))


def main(arguments: list[str]) -> None:
    policy, command = json.loads(arguments[0]), arguments[1:]
    signal.signal(END_EVERYTHING, _end_everything)
    signal.signal(signal.SIGTERM, lambda *_: None)  # the brain's to answer; we wait for it
    if sys.platform.startswith("linux"):
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    if not _parent_death_armed(policy["parent"], END_EVERYTHING):
        _end_everything()
    ruleset = None
    if policy["confine"]:
        try:
            ruleset = build_ruleset(policy["hidden"], policy["read_only"], policy["own"])
        except CannotConfine as error:
            os.write(2, f"parley: the brain could not be confined: {error}\n".encode())
            os._exit(CANNOT_CONFINE)
    brain = _start_brain(command, ruleset, policy["drop_capabilities"])
    status = _wait_for(brain)
    end_descendants()
    _exit_like(status)


if __name__ == "__main__":
    main(sys.argv[1:])
