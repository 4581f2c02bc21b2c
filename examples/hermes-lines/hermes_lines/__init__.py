"""hermes-lines: an example front-end; :mod:`.cli` is its ``hermes.commands`` entry point."""

__all__: list[str] = []
