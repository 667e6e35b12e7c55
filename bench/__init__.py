"""Benchmarks of Parley; ``runtime.py`` is the one to run (see README.md)."""
