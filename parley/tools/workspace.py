"""An agent's workspace tools, as a model brain calls them: read, write, list, edit, find and
run, each confined to the agent's workspace folder on the node.

Each method returns the text the model reads as the tool's result, or raises a ParleyError
whose message, worded for the model, says why it was refused. Every path is checked
(``paths.checked``) and opened beneath the workspace on every call; the blocking file work
runs in a thread, so the node's event loop goes on meanwhile.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Concatenate, ParamSpec

from parley.brains.confinement import ProcessPolicy
from parley.text import refuse_nul
from parley.tools import commands, files, find, paths
from parley.tools.limits import ToolLimits

__all__ = ["ToolLimits", "WorkspaceTools"]

_P = ParamSpec("_P")
_NO_VARIABLES: Mapping[str, str] = MappingProxyType({})


class WorkspaceTools:
    def __init__(
        self,
        workspace: Path,
        *,
        policy: ProcessPolicy,
        env: Mapping[str, str] = _NO_VARIABLES,
        limits: ToolLimits = ToolLimits(),
        grace_seconds: float = 0.2,
    ) -> None:
        self.workspace = workspace
        self.policy = policy
        self.env = dict(env)
        self.limits = limits
        self.grace_seconds = grace_seconds

    async def read(self, path: str) -> str:
        return await self._in_thread(files.read, paths.checked(path), self.limits)

    async def write(self, path: str, content: str) -> str:
        refuse_nul(content, "content")
        return await self._in_thread(files.write, paths.checked(path), content, self.limits)

    async def list(self, path: str = ".") -> str:
        where = paths.checked(path, workspace_ok=True)
        return await self._in_thread(files.listing, where, self.limits)

    async def edit(self, path: str, old: str, new: str) -> str:
        refuse_nul(old, "old")
        refuse_nul(new, "new")
        return await self._in_thread(files.edit, paths.checked(path), old, new, self.limits)

    async def find(self, text: str, path: str = ".") -> str:
        refuse_nul(text, "text")
        where = paths.checked(path, workspace_ok=True)
        return await self._in_thread(find.find, text, where, self.limits)

    async def run(self, command: str) -> str:
        refuse_nul(command, "command")
        return await commands.run(
            command,
            workspace=self.workspace,
            policy=self.policy,
            env=self.env,
            limits=self.limits,
            grace_seconds=self.grace_seconds,
        )

    async def _in_thread(
        self, work: Callable[Concatenate[paths.Beneath, _P], str], *args: _P.args, **kw: _P.kwargs
    ) -> str:
        """``work`` on the opened workspace, in a thread: file I/O may block."""

        def call() -> str:
            with paths.workspace(self.workspace) as ws:
                return work(ws, *args, **kw)

        return await asyncio.to_thread(call)
