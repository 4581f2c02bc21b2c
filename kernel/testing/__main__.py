"""``python -m hermes.kernel.testing serve [--script FILE] [--port N]``.

Runs the fake model server in the foreground and prints its base URL on the
first line of stdout, so a shell script or another process can read it::

    url=$(python -m hermes.kernel.testing serve --script replies.json | head -1)
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from .script import Script, load_script
from .server import FakeModelServer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hermes.kernel.testing", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the fake OpenAI/Anthropic server")
    serve.add_argument("--script", type=Path, help="JSON or YAML script of replies and faults")
    serve.add_argument("--port", type=int, default=0, help="port (default: any free port)")
    args = parser.parse_args(argv)
    try:
        script = load_script(args.script) if args.script else Script()
    except (OSError, ValueError, TypeError) as exc:
        print(f"error: cannot load script {args.script}: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with FakeModelServer(script, port=args.port) as server:
        print(server.base_url, flush=True)
        print(f"OpenAI base URL: {server.openai_base_url}  Anthropic base URL: {server.base_url}",
              file=sys.stderr, flush=True)
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
