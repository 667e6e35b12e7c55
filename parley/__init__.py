"""Parley: a self-hosted home for persistent AI agents."""

__version__ = "0.1.0"
