"""Benchmarks for hermes-kernel: ``python -m bench NAME`` prints a table and writes JSON."""
