"""``python -m hermes.kernel.testing serve [--script FILE] [--port N] [--url-file F] [--detach [--pid-file F]]``.

Runs the fake model server and prints its base URL on the first line of
stdout. In the foreground it runs until stopped (Ctrl-C, SIGTERM);
``--url-file F`` also writes the URL to F once the server listens. From a
shell script, ``--detach`` starts it in the background and returns as soon as
it listens, so a command substitution returns too::

    url=$(python -m hermes.kernel.testing serve --detach --pid-file fake.pid --script replies.json)
    OPENAI_BASE_URL=$url/v1 hermes chat -q hi
    kill "$(cat fake.pid)"
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
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
    serve.add_argument("--url-file", type=Path, help="also write the base URL to this file once listening")
    serve.add_argument("--detach", action="store_true", help="run in the background; print the URL and return")
    serve.add_argument("--pid-file", type=Path, help="with --detach: write the server's process id here")
    args = parser.parse_args(argv)
    try:
        script = load_script(args.script) if args.script else Script()
    except (OSError, ValueError, TypeError) as exc:
        print(f"error: cannot load script {args.script}: {exc}", file=sys.stderr)
        return 2
    if args.detach:
        return _detach(args)
    if args.pid_file:
        print("error: --pid-file goes with --detach", file=sys.stderr)
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with FakeModelServer(script, port=args.port) as server:
        if args.url_file:
            _write_atomically(args.url_file, server.base_url + "\n")
        print(server.base_url, flush=True)
        print(f"OpenAI base URL: {server.openai_base_url}  Anthropic base URL: {server.base_url}",
              file=sys.stderr, flush=True)
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass
    return 0


def _write_atomically(path: Path, text: str) -> None:
    # A reader polling for the file sees nothing or the whole URL, never half of it.
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or Path("."))
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def _detach(args: argparse.Namespace, wait_s: float = 30.0) -> int:
    """Start a foreground server in a new session and return once it listens."""
    with tempfile.TemporaryDirectory(prefix="hermes-fake-") as folder:
        url_file = Path(folder) / "url"
        command = [sys.executable, "-m", "hermes.kernel.testing", "serve", "--port", str(args.port), "--url-file", str(url_file)]
        if args.script:
            command += ["--script", str(Path(args.script).resolve())]
        child = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,  # survives the shell that started it; Ctrl-C there does not reach it
        )  # fmt: skip
        deadline = time.monotonic() + wait_s
        while not url_file.exists():
            if child.poll() is not None or time.monotonic() > deadline:
                child.kill()
                print(f"error: the fake server did not start (exit {child.poll()})", file=sys.stderr)
                return 1
            time.sleep(0.02)
        url = url_file.read_text(encoding="utf-8").strip()
    if args.url_file:
        _write_atomically(args.url_file, url + "\n")
    if args.pid_file:
        _write_atomically(args.pid_file, f"{child.pid}\n")
    print(url, flush=True)
    print(f"fake server {url} runs as process {child.pid}; stop it with: kill {child.pid}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
