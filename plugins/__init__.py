"""Built-in plugins of hermes-kernel: model providers, credential strategies and tools.

Each registers through an entry point in pyproject.toml, exactly as a third party would.
"""
