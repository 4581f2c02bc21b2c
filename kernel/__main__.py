"""``python -m hermes.kernel`` runs the ``hermes`` command line."""

from .cli import main

main()
