"""``python -m parley`` is the ``parley`` command."""

from parley.cli.main import main

main()
