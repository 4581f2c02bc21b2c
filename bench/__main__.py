"""``python -m bench [NAME ...] [--runs N] [--out DIR] [--backend postgresql]``: run benchmarks by name.

``python -m bench mutation [MODULE ...]`` runs mutation testing instead (bench/mutation.py).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

BENCHMARKS = {
    "startup": "bench.startup",
    "providers": "bench.providers",
    "store": "bench.store",
    "loop": "bench.loop",
    "compress": "bench.compress",
    "compat": "bench.compat",
    "serve": "bench.serve",
    "serve_slowloris": "bench.serve_slowloris",
    "oneshot": "bench.oneshot",
    "mcp": "bench.mcp",
    "hermes_home": "bench.hermes_home",
    "hooks": "bench.hooks",
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["mutation"]:  # its own arguments (modules, --list, --jobs); see bench/mutation.py
        from bench import mutation

        return mutation.main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("names", nargs="*", default=list(BENCHMARKS), help=f"benchmarks: {', '.join(BENCHMARKS)}")
    parser.add_argument("--runs", type=int, default=None, help="repetitions per measurement")
    parser.add_argument("--backend", default=None, help="store only: sqlite (default) or postgresql")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results", help="folder for JSON results")
    args = parser.parse_args(argv)
    for name in args.names:
        if name not in BENCHMARKS:
            parser.error(f"unknown benchmark {name!r}; available: {', '.join(BENCHMARKS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.names:
        module = importlib.import_module(BENCHMARKS[name])
        extra = {"backend": args.backend} if args.backend and name == "store" else {}
        result = module.run(runs=args.runs, **extra)
        path = args.out / f"{name}.json"
        path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
