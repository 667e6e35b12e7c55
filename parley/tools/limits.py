"""How much an agent's workspace tools read, write, list, find and keep of a command's output,
and how long a command may run: bounds that keep one tool call from filling the node's memory
or the model's context."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ToolLimits:
    # A read returns at most this, then says it was cut and how big the file is.
    max_read_bytes: int = 256 * 1024
    # A write's content, or an edit's result, bigger than this is refused.
    max_write_bytes: int = 1024 * 1024
    max_list_entries: int = 500
    max_find_matches: int = 200
    # Larger files are skipped by find (and said so in its summary).
    max_find_file_bytes: int = 1024 * 1024
    # Files (and folders) find examines at most.
    max_find_files: int = 5000
    run_timeout_seconds: float = 120.0
    # Of a command's stdout and stderr together, kept in its result; the rest is read and
    # dropped, never buffered.
    max_output_bytes: int = 64 * 1024
