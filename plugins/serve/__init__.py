"""``hermes serve``: an OpenAI-compatible API and a read-only dashboard over the CLI's agent.

A front-end plugin: pyproject.toml registers :mod:`.cli` in the ``hermes.commands``
entry-point group, as a third party would, and every module here uses only the
kernel's public API. This package imports nothing, so ``hermes --help`` pays only
for :mod:`.cli` (typer); Starlette and uvicorn are imported by :mod:`.app` and
:mod:`.server`, which only ``hermes serve`` itself loads.
"""

__all__: list[str] = []
