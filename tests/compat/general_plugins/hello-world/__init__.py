"""Hello world: one tool, one hook, one slash command, one CLI command (Hermes Agent's plugin API)."""

import json
import os
from pathlib import Path

SCHEMA = {
    "name": "hello_world",
    "description": "Greet someone by name.",
    "parameters": {
        "type": "object",
        "properties": {"name": {"type": "string", "description": "Who to greet."}},
        "required": ["name"],
    },
}


def _log(line):
    home = Path(os.environ.get("HERMES_HOME", "."))
    with open(home / "hello-world.log", "a", encoding="utf-8") as fh:
        fh.write(line + "\n")


def hello(args, **kwargs):
    return json.dumps({"greeting": f"Hello, {args.get('name', 'world')}!"})


def after_tool(tool_name, args, result, **kwargs):
    _log(f"post_tool_call {tool_name}")


def slash_hello(raw_args):
    return f"Hello from a slash command, {raw_args or 'world'}!"


def setup_cli(parser):
    parser.add_argument("who", nargs="?", default="world")


def run_cli(args):
    print(f"Hello, {args.who}! (from hermes hello)")
    return 0


def register(ctx):
    ctx.register_tool(name="hello_world", toolset="hello", schema=SCHEMA, handler=hello, emoji="👋")
    ctx.register_hook("post_tool_call", after_tool)
    ctx.register_command("hello", slash_hello, description="Say hello")
    ctx.register_cli_command("hello", help="Say hello from a plugin", setup_fn=setup_cli, handler_fn=run_cli)
