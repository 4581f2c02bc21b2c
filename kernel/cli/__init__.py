"""The ``hermes`` command line: an explicit typer root with one sub-app per group.

Front-ends (``serve``, third parties' commands) are plugins in the
``hermes.commands`` entry-point group; the helpers they share with the built-in
commands (the invocation's :class:`AppState`, JSON and table output, one-line
failures) are public here.
"""

# No `from __future__ import annotations` here: typer would eval the root callback's
# string annotations on every start (about 1.3 % of `hermes --help`, bench/startup.py).
import sys
from collections.abc import Sequence
from typing import Annotated, Any, Optional

import typer

from .._version import __version__
from ..errors import HermesError
from ..host import PluginHost
from ..lazy_log import when_logging_loads
from ._lazy import LazyCommand, LazyGroup
from ._state import AppState, JsonOption, fail, print_json, print_table, report, state, warn_unknown_keys

__all__ = [
    "AppState",
    "JsonOption",
    "build_app",
    "fail",
    "main",
    "print_json",
    "print_table",
    "report",
    "state",
    "warn_unknown_keys",
]


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"hermes-kernel {__version__}")
        raise typer.Exit()


def _root(
    ctx: typer.Context,
    profile: Annotated[
        Optional[str],
        typer.Option("--profile", "-p", help="Use the profile NAME (HERMES_HOME/profiles/NAME)."),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log debug detail to stderr.")] = False,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version_callback, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """hermes: a thin, plugin-first kernel for long-running AI agents."""
    app_state = state(ctx)
    if profile is not None:
        app_state.profile = profile
    if verbose:
        import logging

        logging.getLogger("hermes").setLevel(logging.DEBUG)


# Built-in commands load on first use; the help line is what `hermes --help` shows
# (tests/kernel/cli/test_lazy.py checks it matches the command's docstring). Front-ends
# are not here: they come from the `hermes.commands` entry points, built-in ones too.
BUILTIN_COMMANDS = {
    "chat": LazyCommand(".chat", "chat", "Chat with the agent (REPL), or answer once with -q or what is piped in."),
    "sessions": LazyCommand(".sessions", "app", "Browse, search, branch, export and delete stored sessions."),
    "usage": LazyCommand(".usage_cmd", "usage", "Show token usage, cost and API calls for one session or all of them."),
    "config": LazyCommand(".config_cmd", "app", "Read and change configuration (config.yaml and .env)."),
    "profile": LazyCommand(".profile", "app", "Manage profiles: separate homes with their own config, keys and sessions."),
    "plugin": LazyCommand(".plugin", "app", "Install, list, enable, disable and remove plugins."),
    "auth": LazyCommand(".auth", "app", "Manage API keys of the credential pool (HERMES_HOME/auth.json)."),
    "models": LazyCommand(".models_cmd", "app", "Show model context windows and output limits, and where each figure came from."),
    "memory": LazyCommand(".memory_cmd", "app", "Show memory providers and saved entries; set one up; turn memory off or on."),
    "skills": LazyCommand(".skills_cmd", "app", "List, show, install, remove and audit skills."),
    "mcp": LazyCommand(".mcp_cmd", "app", "Add, list, test and remove MCP servers (tools from the Model Context Protocol)."),
    "doctor": LazyCommand(".doctor", "doctor", "Check config, plugins, state.db, permissions and API keys; --fix repairs what it can."),
}


def build_app(host: PluginHost) -> typer.Typer:
    """The root app: the built-in groups, the ``hermes.commands`` entry points ``host`` allows
    and every plugin's ``register_commands``."""
    plugin_host = host  # a class body cannot read a function's name it also assigns

    class Root(LazyGroup):
        lazy = BUILTIN_COMMANDS
        host = plugin_host

    # rich help formatting costs ~50 ms of imports; plain help keeps startup light.
    app = typer.Typer(
        name="hermes",
        cls=Root,
        no_args_is_help=True,
        rich_markup_mode=None,
        pretty_exceptions_show_locals=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(_root)
    host.call("register_commands", app=app)
    return app


def _prescan_profile(args: Sequence[str]) -> str | None:
    """``-p NAME`` from argv, needed before parsing to load that profile's plugins."""
    for index, arg in enumerate(args):
        if arg == "--":
            break
        if arg in ("-p", "--profile") and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith("--profile="):
            return arg.split("=", 1)[1]
        if arg.startswith("-p") and len(arg) > 2 and not arg.startswith("--"):
            return arg[2:]
    return None


def _redact_records(record: Any) -> bool:
    """Redact secrets from a log record; the patterns compile on the first record, not at startup."""
    from ..redact import RedactingFilter

    global _redactor
    if _redactor is None:
        _redactor = RedactingFilter()
    return bool(_redactor.filter(record))


_redactor: Any = None


def _setup_logging() -> None:
    """The ``hermes`` logger's stderr handler; run when :mod:`logging` is first imported."""
    import logging

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("hermes: %(levelname)s: %(message)s"))
    handler.addFilter(_redact_records)  # on the handler: it sees records of every child logger
    logger = logging.getLogger("hermes")
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)


def _ignore_more_interrupts() -> None:
    """A second Ctrl-C while the process exits would kill it mid-cleanup (interpreter shutdown
    restores the default handler): from the first one on, later presses are ignored."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    args = list(sys.argv[1:] if argv is None else argv)
    # Most commands never import logging (kernel/lazy_log.py); the handler comes with it.
    when_logging_loads(_setup_logging)
    app_state = AppState(profile=_prescan_profile(args))
    try:
        host = app_state.host
        host.load_plugins()
        app = build_app(host)
        app(args=args, prog_name="hermes", obj=app_state)
    except KeyboardInterrupt:
        _ignore_more_interrupts()
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except SystemExit as exc:
        exit_ = exc.__context__
        if exc.code == 130 and isinstance(getattr(exit_, "__cause__", None), KeyboardInterrupt):
            # Typer turns a Ctrl-C outside a turn into a silent exit 130: say it, once.
            _ignore_more_interrupts()
            typer.echo("interrupted", err=True)
        raise
    except Exception as exc:  # the one top-level handler: one line, printed once
        from ._errors import explain

        home = None
        try:
            home = app_state.home.path
        except HermesError:
            pass
        message, code = explain(exc, home)
        typer.echo(f"error: {message}", err=True)
        sys.exit(code)
