"""Which terminal commands run without asking: those the parser understands whole and knows are safe.

This rule ("understand or ask", issue 27) replaces a list of bad shapes, which always misses one.
A command runs unasked only when

* the parser (:mod:`hermes.kernel.shell`) sees everything it will execute: no program named by a
  variable, substitution or glob; no ``eval``, ``source``, alias or function defined on the line;
  no ``sh -c`` of text only known at run time (literal text is read as commands); no script fed
  by a pipe; nothing handed to ``xargs``, ``find -exec``, awk's ``system()`` or the code of
  ``python -c``, ``perl -e`` and ``node -e``;
* every program it runs is in the allow set (:data:`SAFE_PROGRAMS`: the declarations of
  ``command_safety.toml`` and the functions below) with arguments its entry understands:
  readers that only read, writers whose every target is inside the workspace, and runners of
  the workspace's own code (``make``, ``pytest``, ``python script.py``, ``npm test``);
* a word whose text is only known at run time reaches nothing but printers (``echo``), and no
  variable's value is sent over the network;
* nothing reads a deny-listed path (:mod:`hermes.kernel.paths_policy`) or a whole folder that
  holds one (``tar c ~``, ``grep -r x ~``), whatever the output's encoding.

Anything else needs approval: the REPL asks, a one-shot run and a server without an allow-list
match refuse, ``--yolo`` approves. Code the workspace holds (a Makefile, a test, a script the
agent wrote) runs with the user's rights: that is the workspace's trust, not this check's.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import re
import tomllib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from .paths_policy import command_denied_reason, denied_inside, is_inside
from .shell import SHELLS, SimpleCommand, simple_commands

__all__ = ["SAFE_PROGRAMS", "approval_reason"]

_GLOB = re.compile(r"[*?\[]")
_VAR_LEFT = re.compile(r"\$[A-Za-z_{(]|`")
_HARMLESS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-", ""})


def _first(reasons: Iterable[str | None]) -> str | None:
    return next((reason for reason in reasons if reason), None)


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# --------------------------------------------------------------------------- where a command runs, what it names
@dataclass
class _Scope:
    """The workspace roots and every folder a ``cd`` on the line may have left the shell in."""

    roots: tuple[Path, ...]
    folders: list[Path]
    hermes_home: Path | None
    lost: bool = False  # a cd to a folder only known at run time

    def inside(self, path: Path) -> bool:
        return any(is_inside(path, root) for root in self.roots)


def _runtime(word: str) -> bool:
    """True when the text of ``word`` is only known when it runs (a substitution, a variable not set here)."""
    return "$(" in word or bool(_VAR_LEFT.search(os.path.expandvars(word)))


def _paths(word: str, scope: _Scope) -> list[Path] | None:
    """The absolute paths ``word`` names from each possible working folder (globs matched); None if unknown."""
    text = os.path.expanduser(os.path.expandvars(word))
    if _runtime(word) or (scope.lost and not os.path.isabs(text)):
        return None
    found: list[Path] = []
    for base in [Path("/")] if os.path.isabs(text) else scope.folders:
        full = os.path.join(base, text)
        found += [Path(os.path.abspath(m)) for m in (glob.glob(full)[:500] if _GLOB.search(full) else []) or [full]]
    return found


def _show(word: str, path: Path) -> str:
    return word if word == str(path) else f"{word} ({path})"


def _outside(word: str, scope: _Scope) -> str | None:
    """None when every path ``word`` names is inside the workspace, spelled and resolved; else the one that is not."""
    if word in _HARMLESS or word.isdigit() or word.startswith((">(", "<(")):
        return None
    paths = _paths(word, scope)
    if paths is None:
        return f"{word}, a path only known when it runs"
    home = Path(os.path.realpath(Path.home()))
    for candidate in (c for path in paths for c in (path, Path(os.path.realpath(path)))):
        if not scope.inside(candidate):
            return f"{_show(word, candidate)}, outside the workspace"
        if scope.inside(home) and home in candidate.parents and candidate.parts[len(home.parts)].startswith("."):
            return f"{_show(word, candidate)}, a start-up or settings file of the home folder"  # the workspace holds ~
    return None


def _deletes(word: str, scope: _Scope, recursive: bool) -> str | None:
    """Why deleting (or moving away) ``word`` needs approval: outside, the workspace itself, or a ``.git``."""
    where = _outside(word, scope)
    if where is not None or not recursive:
        return where
    for path in _paths(word, scope) or []:
        if any(is_inside(root, Path(os.path.realpath(path))) for root in scope.roots):
            return f"{_show(word, path)}, the whole workspace"
        if ".git" in path.parts:
            return f"{word}, a repository's history (.git)"
    text = os.path.expanduser(os.path.expandvars(word))
    if os.path.basename(text) in ("*", ".*") and any(
        Path(os.path.realpath(os.path.join(base, os.path.dirname(text) or "."))) in scope.roots for base in scope.folders
    ):
        return f"{word}, everything in the workspace"
    return None


def _reads_whole(word: str, scope: _Scope) -> str | None:
    """Why reading every file under ``word`` reads a deny-listed path, or None."""
    for path in _paths(word, scope) or []:
        if held := denied_inside(Path(os.path.realpath(path)), hermes_home=scope.hermes_home):
            return f"reads every file under {_show(word, path)}, and {held}"
    return None


def _in_workspace(scope: _Scope, what: str) -> str | None:
    """Why the working folder is no place to run the workspace's own code (``make``, ``npm test`` …)."""
    if scope.lost:
        return f"runs {what} in a folder only known when it runs"
    outside = [f for f in scope.folders if not scope.inside(Path(os.path.realpath(f)))]
    return f"runs {what} in {outside[0]}, outside the workspace" if outside else None


@dataclass
class _Cmd(SimpleCommand):
    """One simple command in its scope (argv's readers, ``flag``, ``values``, ``positional``, are the parser's)."""

    scope: _Scope = dataclasses.field(default_factory=lambda: _Scope((), [], None))

    @classmethod
    def of(cls, parsed: SimpleCommand, scope: _Scope) -> _Cmd:
        return cls(**{f.name: getattr(parsed, f.name) for f in dataclasses.fields(SimpleCommand)}, scope=scope)

    def sub(self, argv: list[str]) -> SimpleCommand:
        """The command a tail of this one's argv runs: ``uv run pytest`` runs ``pytest``."""
        written = self.written[len(self.argv) - len(argv) :]
        return dataclasses.replace(self, argv=argv, written=written, words=argv, assigns=[])


# --------------------------------------------------------------------------- the allow set, declared
@dataclass(frozen=True)
class _P:
    """What a program may do unasked; command_safety.toml's header says what each field means."""

    asks: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    targets: str = ""
    recursive: tuple[str, ...] | None = None
    valued: frozenset[str] = frozenset()
    subs: frozenset[str] | None = None
    cwd: str = ""


def _check(c: _Cmd, p: _P) -> str | None:  # a declared program: its asks, subcommands, writes, folders, cwd
    for arg in c.args[: c.args.index("--") if "--" in c.args else None]:
        if any((arg[:1] == "-" and arg[1:2] != "-" and a in arg[1:]) if len(a) == 1 else arg.startswith(a) for a in p.asks):
            return f"is given {arg}, which runs another program or reaches past what the check reads"
    words = c.positional(p.valued)
    if p.subs is not None and words and words[0] not in p.subs and ":".join(words[:2]) not in p.subs:
        return f"runs `{c.name} {words[0]}`, which is not known to be safe"
    rest = words[1:] if p.subs is not None else words
    picked = {"all": rest, "first": rest[:1], "second": rest[1:2]}.get(p.targets, [])
    if where := _first(_outside(word, c.scope) for word in [*c.values(*p.writes), *picked]):
        return f"writes {where}"
    if p.recursive is not None and (not p.recursive or c.flag(*p.recursive)):
        if whole := _first(_reads_whole(word, c.scope) for word in [*rest, "."]):
            return whole
    if p.cwd == "write":
        return _outside(".", c.scope) and f"writes into {_outside('.', c.scope)}"
    if p.cwd in ("build", "run"):
        return _in_workspace(c.scope, c.name) or (_run_args(c, c.args) if p.cwd == "run" else None)
    return None


def _declarations(data: dict[str, Any]) -> dict[str, _P]:  # the [[program]] tables as _P, printers and readers bare
    declared = dict.fromkeys(_set(data["printers"]) | _set(data["readers"]), _P())
    for entry in data["program"]:
        fields = {k: (frozenset(v) if k in ("valued", "subs") else tuple(v)) if isinstance(v, list) else v
                  for k, v in entry.items() if k != "names"}  # fmt: skip
        declared.update(dict.fromkeys(entry["names"].split(), _P(**fields)))
    return declared


# The allow set's data: small and plain, so it is read once, at import.
_DATA = tomllib.loads(resources.files(__package__).joinpath("command_safety.toml").read_text(encoding="utf-8"))
_DECLARED = _declarations(_DATA)
_PRINTERS = _set(_DATA["printers"])
Rule = Callable[[_Cmd], "str | None"]
_RULES: dict[str, Rule] = {}  # programs whose arguments need code to read


def _rule(names: str) -> Callable[[Rule], Rule]:
    def register(rule: Rule) -> Rule:
        _RULES.update(dict.fromkeys(names.split(), rule))
        return rule

    return register


_rule("gzip gunzip bzip2 bunzip2 xz unxz zstd unzstd lz4")(lambda c: None if c.flag(  # in place unless to stdout
    "c", "l", "t", "--stdout", "--to-stdout", "--list", "--test") else _check(c, _DECLARED[c.name]))
_rule("make gmake")(lambda c: "sets make variables, which a recipe may run as a command" if any(
    "=" in a and a[0] != "-" for a in c.args) else _check(c, _DECLARED[c.name]))


# --------------------------------------------------------------------------- the shell's own words
@_rule("cd pushd popd")  # harmless itself; later relative paths are judged from every folder it may reach
def _cd(c: _Cmd) -> None:
    targets = c.positional()
    if c.name != "popd":  # popd goes back to a folder the scope already holds
        paths = None if targets[:1] == ["-"] else _paths(targets[0], c.scope) if targets else [Path.home()]
        c.scope.lost = c.scope.lost or paths is None
        c.scope.folders += [path for path in paths or [] if path not in c.scope.folders]


def _assignment(word: str, scope: _Scope) -> str | None:
    name, _, value = word.partition("=")
    if name == "PYTHONPATH" and (where := _first(_outside(part, scope) for part in value.split(":"))):
        return f"loads Python code from {where}"
    risky = re.fullmatch("|".join(_DATA["risky_variables"].split()), name)
    return f"sets {name}, which changes what a later program runs or loads" if risky else None


_rule("export declare local readonly typeset")(lambda c: _first(_assignment(w, c.scope) for w in c.args if "=" in w and w[0] != "-"))


@_rule("kill")  # named processes only: -1 and process groups reach everything the user runs
def _kill(c: _Cmd) -> str | None:
    pids = c.args[2:] if c.args[:1] in (["-s"], ["-n"]) else c.args[1:] if c.args[:1] and c.args[0][:1] == "-" else c.args
    named = c.args[:1] == ["-l"] or all((p.isdigit() and int(p) > 1) or re.fullmatch(r"%\d*", p) for p in pids)
    return None if named else "signals more than the processes it names (-1 or a group reaches every process of the user)"


# --------------------------------------------------------------------------- writers whose targets must be inside
@_rule("rm unlink rmdir")  # inside the workspace, and never the workspace itself, everything in it or a .git
def _rm(c: _Cmd) -> str | None:
    if c.flag("--no-preserve-root"):
        return "turns off rm's guard of the root folder"
    recursive = c.flag("r", "R", "--recursive")
    return _first(f"deletes {_deletes(p, c.scope, recursive)}" for p in c.positional() if _deletes(p, c.scope, recursive))


@_rule("cp mv ln install")  # the target inside; mv also deletes its sources; cp -r must not copy ~ whole
def _copy(c: _Cmd) -> str | None:
    paths = c.positional(_set("-t --target-directory -S --suffix -m --mode -o -g --owner --group"))
    targets = c.values("-t", "--target-directory")
    sources = paths if targets else paths[:-1]
    if not targets and paths:
        targets = [paths[-1] if len(paths) > 1 or c.name != "ln" else os.path.basename(paths[0])]
    if c.name == "mv" and (where := _first(_deletes(p, c.scope, True) for p in sources)):
        return f"moves away {where}"
    if c.name in ("cp", "install") and c.flag("r", "R", "a", "--recursive", "--archive"):
        if whole := _first(_reads_whole(p, c.scope) for p in sources):
            return whole
    if c.name in ("mv", "ln") and (devices := [t for t in targets if t.startswith("/dev/")]):
        return f"replaces {devices[0]} (a device)"
    return _first(f"writes {_outside(t, c.scope)}" for t in targets if _outside(t, c.scope))


@_rule("chmod")  # files inside, and no setuid/setgid/sticky bit
def _chmod(c: _Cmd) -> str | None:
    paths = c.positional()
    mode, files = (paths[0], paths[1:]) if paths and not c.values("--reference") else ("", paths)
    if re.search(r"[st]|^0*[1-7][0-7]{3}$", mode):
        return "sets the setuid, setgid or sticky bit"
    return _first(f"changes {_outside(p, c.scope)}" for p in files if _outside(p, c.scope))


_rule("dd")(lambda c: _first(f"writes {_outside(a[3:], c.scope)}" for a in c.args if a[:3] == "of=" and _outside(a[3:], c.scope)))


# --------------------------------------------------------------------------- text tools that can run others
# A sed script of commands that only print, delete or substitute (``s`` without the e or w flag), by sed's grammar.
_SED_ADDRESS = r"(?:\d+(?:~\d+)?|\$|/(?:[^\\/\n]|\\.)*/I?)"
_SED_SAFE = re.compile(
    rf"(?:[\s;{{}}]*(?:{_SED_ADDRESS}(?:\s*,\s*(?:{_SED_ADDRESS}|[+~]\d+))?)?\s*!?\s*"
    r"(?:[pdDqQ=nNgGhHxlPz]|[qQ]\s*\d+|s(.)(?:(?!\1)[^\\\n]|\\.)*\1(?:(?!\1)[^\\\n]|\\.)*\1[gpiImM0-9]*"
    r"|y(.)(?:(?!\2)[^\\\n]|\\.)*\2(?:(?!\2)[^\\\n]|\\.)*\2))*[\s;{}]*"
)


@_rule("sed gsed")  # a script of p/d/s/y/q only (sed can run e and write w), -i only inside
def _sed(c: _Cmd) -> str | None:
    if c.values("-f", "--file"):
        return "reads its script from a file the check does not read"
    paths, expressions = c.positional(_set("-e --expression -l --line-length")), c.values("-e", "--expression")
    if not all(_SED_SAFE.fullmatch(script) for script in expressions or paths[:1]):
        return "has a sed script with commands that may run a program or read or write a file (e, w, r, s///e …)"
    if any(a.startswith("-i") or a == "--in-place" or re.fullmatch(r"-[nEsrzu]+i\S*", a) for a in c.args):
        return _first(f"edits {_outside(f, c.scope)}" for f in paths[0 if expressions else 1 :] if _outside(f, c.scope))
    return None


@_rule("awk gawk mawk nawk")  # awk can run commands and write files from its program text
def _awk(c: _Cmd) -> str | None:
    if c.values("-f", "--file", "-i", "--include", "-l", "--load", "-E", "--exec"):
        return "reads its program from a file the check does not read"
    programs = c.values("-e", "--source") or c.positional(_set("-v -F --assign --field-separator"))[:1]
    if any(re.search(r"\bsystem\b|\bgetline\b|\||@|\bprintf?\b[^;{}]*>", p) for p in programs):
        return "has an awk program that may run a command or write a file (system, getline, |, > or @)"
    return None


@_rule("find")  # no -exec; -delete and -fprint only inside
def _find(c: _Cmd) -> str | None:
    if any(a in ("-exec", "-execdir", "-ok", "-okdir") for a in c.args):
        return "runs a command on every file it finds (find -exec), with arguments only known when it runs"
    starts = []
    for arg in c.args:
        if arg.startswith(("-", "(", "!")) and arg not in ("-H", "-L", "-P"):
            break
        starts.append(arg)
    outputs = [c.args[i + 1] for i, a in enumerate(c.args[:-1]) if a in ("-fprint", "-fprint0", "-fprintf", "-fls")]
    if where := _first(_outside(o, c.scope) for o in outputs):
        return f"writes {where}"
    if "-delete" in c.args:  # a bare -delete takes everything under its start, a tested one only what matches
        tested = any(re.fullmatch(r"-i?(?:name|path|regex|wholename|lname)|-type|-newer\w*|-[amc](?:time|min)|-size"
                                  r"|-empty|-perm|-user|-group", a) for a in c.args)  # fmt: skip
        where = _first(_deletes(s, c.scope, not tested) for s in starts or ["."])
        return where and f"deletes {where}"
    return None


# --------------------------------------------------------------------------- running code
_CODE_ON_LINE = "runs code given on the command line, which the check does not read"


def _run_args(c: _Cmd, words: Sequence[str]) -> str | None:
    """Arguments of the workspace's own code: each path-like word (or ``--opt=`` value) must be inside."""
    for value in (v for word in words for v in (word, word.split("=", 1)[1] if "=" in word else "")):
        if (value.startswith(("/", "~", ".")) or "/" in value) and "://" not in value and (where := _outside(value, c.scope)):
            return f"passes {where} to the workspace's code"
    return None


def _script(c: _Cmd, word: str, rest: Sequence[str]) -> str | None:
    """``bash x.sh``, ``python x.py``: the script must be a workspace file the parser can name."""
    if word.startswith(("<(", ">(", "/dev/fd/")) or word in ("-", "/dev/stdin"):
        return "runs a script another command feeds it, which the check cannot read"
    paths = _paths(word, c.scope)
    outside = [p for p in paths or [] if not c.scope.inside(Path(os.path.realpath(p)))]
    if paths is None or outside:
        return f"runs {_show(word, outside[0]) if outside else word}, a script outside the workspace or only known when it runs"
    return _run_args(c, rest)


def _stdin_code(c: _Cmd, judge_text: Callable[[str], str | None] = lambda body: "runs code from its input") -> str | None:
    """An interpreter with no script reads one from stdin: a literal here-document is read, a pipe is not."""
    if c.heredocs:
        body, expands = c.heredocs[-1]
        return "runs a script holding text only known when it runs" if expands and "$" in body else judge_text(body)
    if c.reads:
        return _script(c, c.reads[-1], [])
    if c.stage > 0 or c.depth > 0:
        return "runs a script fed to it by another command, which the check cannot read"
    return None  # stdin is /dev/null: nothing runs


@_rule(" ".join(SHELLS))  # a workspace script, literal -c text (its commands are judged), or a literal here-doc
def _shell(c: _Cmd) -> str | None:
    for index, arg in enumerate(c.args):
        if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
            text = c.written[index + 2] if index + 2 < len(c.written) else ""
            return "runs text only known when it runs" if _runtime(text) else None  # literal: read as commands
        if not arg.startswith(("-", "+")):
            return _script(c, arg, c.args[index + 1 :])
    return _stdin_code(c, lambda body: _judge(simple_commands(body), dataclasses.replace(c.scope, folders=[*c.scope.folders])))


@_rule("python python3 python2 pypy3 " + " ".join(f"python3.{n}" for n in range(6, 16)))
def _python(c: _Cmd) -> str | None:
    args, index = c.args, 0
    while index < len(args) and args[index].startswith("-") and args[index] != "-":
        arg = args[index]
        if arg.startswith("-c"):
            return _CODE_ON_LINE
        if arg.startswith("-m"):
            module, rest = (arg[2:], args[index + 1 :]) if arg[2:] else ((args[index + 1 :] or [""])[0], args[index + 2 :])
            tool = "pre-commit" if module == "pre_commit" else module
            if tool in SAFE_PROGRAMS and tool not in _PRINTERS and not tool.startswith("python"):
                return _judge_one(c.sub([tool, *rest]), c.scope)
            if module in _set(_DATA["python_modules"]):
                return _run_args(c, rest)
            return f"runs the module {module}, which is not known to be safe"
        index += 2 if arg in ("-W", "-X") else 1
    return _script(c, args[index], args[index + 1 :]) if index < len(args) else _stdin_code(c)


@_rule("node ruby perl php Rscript lua")  # a workspace script; code on the line (-e) is not read
def _interpreter(c: _Cmd) -> str | None:
    if any(re.fullmatch(r"-\w*[erpEn]\w*|--eval|--print", a) for a in c.args):
        return _CODE_ON_LINE
    scripts = c.positional(_set("-I -r --require -M"))
    return _script(c, scripts[0], scripts[1:]) if scripts else _stdin_code(c)


# --------------------------------------------------------------------------- package managers
def _from_anywhere(c: _Cmd, words: Sequence[str]) -> str | None:
    """Package specs that name a URL, a VCS or a path outside the workspace: code the command chooses to run."""
    for word in words:
        if "://" in word or word.startswith(("git+", "hg+", "svn+", "bzr+", "git@", "github:", "gitlab:", "file:")):
            return f"installs {word}, code from a location the command names"
        if (word.startswith((".", "/", "~")) or word.endswith((".whl", ".tar.gz", ".tgz", ".zip"))) and (
                where := _outside(word, c.scope)):  # fmt: skip
            return f"installs and builds {where}"
    return None


_rule("pip pip3")(lambda c: _check(c, _DECLARED["pip"]) or _from_anywhere(c, [
    *c.positional(_DECLARED["pip"].valued)[1:], *c.values("-e", "--editable")]))


@_rule("npm pnpm yarn")  # the project's scripts and its registry; not global, exec/dlx or URLs
def _npm(c: _Cmd) -> str | None:
    if c.flag("g", "--global") or any(a.startswith("--location=g") for a in c.args):
        return "installs globally, outside the workspace"
    words = c.positional(_DECLARED["npm"].valued)
    sub = words[0] if words else "install"
    if sub not in _DECLARED["npm"].subs and (c.name == "npm" or sub in ("exec", "x", "dlx", "create", "publish", "config")):
        return f"runs `{c.name} {sub}`, which may download and run a package or publish one"
    if where := _first(_outside(v, c.scope) for v in c.values("--prefix", "-C", "--dir", "--cwd")):
        return f"runs in {where}"
    installs = sub in ("install", "i", "add", "ci", "update", "up", "upgrade")
    return (_from_anywhere(c, words[1:]) if installs else None) or _in_workspace(c.scope, c.name)


@_rule("uv poetry pipenv pdm")  # `run X` is judged as X
def _uv(c: _Cmd) -> str | None:
    words = c.positional(_DECLARED["uv"].valued)
    sub = words[0] if words else ""
    if sub in ("run", "pip"):
        inner = c.args[c.args.index(sub) + 1 :]
        while sub == "run" and inner and inner[0].startswith("-"):
            inner = inner[1:]
        return _judge_one(c.sub(["pip", *inner] if sub == "pip" else inner), c.scope) if inner else None
    if sub not in _DECLARED["uv"].subs:
        return f"runs `{c.name} {sub}`, which is not known to be safe"
    return _from_anywhere(c, words[1:]) if sub in ("add", "install") else _in_workspace(c.scope, c.name) or _run_args(c, words[1:])


# --------------------------------------------------------------------------- git and the network
_GIT_READ, _GIT_WRITE = _set(_DATA["git"]["read"]), _set(_DATA["git"]["write"])


def _git_asks(sub: str, rest: list[str], first: str) -> str | None:
    """Git subcommands that are safe except in these forms."""
    starts = lambda *prefixes: any(a.startswith(prefixes) for a in rest)  # noqa: E731
    config_read = starts("--get", "--list", "-l", "--show") or first in ("get", "list") or len([a for a in rest if a[0] != "-"]) == 1
    return {
        "reset": "--hard" in rest and "discards uncommitted changes (git reset --hard)",
        **dict.fromkeys(("checkout", "restore", "switch"), bool({"-f", "--force", "--discard-changes", ".", ":/", "*"} & set(rest))
                        and "discards the uncommitted changes of every file"),
        "clean": not any(a == "--dry-run" or re.fullmatch(r"-\w*n\w*", a) for a in rest)
                 and "deletes untracked files, which git cannot bring back",
        "stash": first in ("drop", "clear") and "drops stashed changes",
        "reflog": first in ("expire", "delete") and "drops history from the reflog",
        "rebase": starts("-x", "--exec") and "runs a command for each commit",
        "bisect": first == "run" and "runs a command for each step",
        "submodule": first == "foreach" and "runs a command in each submodule",
        "config": not config_read and "sets git configuration, which can name programs git runs",
        "grep": starts("-O", "--open-files-in-pager") and "runs a pager command",
        "archive": starts("--remote", "--exec") and "reaches a remote archive",
    }.get(sub) or (starts("--upload-pack", "--receive-pack", "--template", "-u", "ext::", "fd::", "--config")
                   or (sub == "clone" and "-c" in rest)) and "runs a program or template the command names" or None  # fmt: skip


@_rule("git")  # known subcommands; no -c/config that names programs, no history loss, repository inside
def _git(c: _Cmd) -> str | None:
    args, index, repos = c.args, 0, []
    while index < len(args) and args[index].startswith("-"):
        if args[index].startswith(("-c", "--config-env", "--exec-path", "--git-dir", "--work-tree")):
            return "sets git options on the command line, which can name programs git runs"
        repos += args[index + 1 : index + 2] if args[index] == "-C" else []
        index += 2 if args[index] == "-C" else 1
    if index >= len(args):
        return None
    sub, rest = args[index], args[index + 1 :]
    first = next((a for a in rest if not a.startswith("-")), "")
    if sub not in _GIT_READ | _GIT_WRITE:
        return _DATA["git"]["named"].get(sub, f"runs `git {sub}`, which is not a git command known to be safe")
    if asked := _git_asks(sub, rest, first):
        return asked
    outputs = [o for a, o in zip(rest, rest[1:]) if a in ("-o", "--output", "--output-directory")]
    outputs += [a.split("=", 1)[1] for a in rest if a.startswith(("--output=", "--output-directory="))]
    places = c.sub([sub, *rest]).positional(_set("-b --branch --depth -o --origin --reference --filter -j --jobs"))
    outputs += places[1:2] if sub == "clone" else places[2 if first == "move" else 1 :][:1] if sub == "worktree" else []
    if where := _first(_outside(o, c.scope) for o in outputs):
        return f"writes {where}"
    if sub in _GIT_WRITE and (where := _first(_outside(r, c.scope) for r in repos or ["."])):
        return f"changes the repository in {where}"
    return None


@_rule("curl wget")  # downloads only: no file or variable sent, no local file read, saves inside
def _fetch(c: _Cmd) -> str | None:
    if any(re.match(r"(?:[\w.-]*=)?[@<]\S", a) for a in c.args) or c.flag(
            "T", "K", "--upload-file", "--config", "--post-file", "--body-file", "--execute", "--use-askpass"):  # fmt: skip
        return "sends a file's contents or reads options from a file (@file, -T, -K, --post-file, -e)"
    if (c.name == "wget" and c.flag("e")) or any(re.match(r"(?i)(?:file|scp|sftp|dict|gopher|ldaps?|telnet|smb)://", a) for a in c.args):
        return "reads a local file, runs a wgetrc command or uses a protocol the check does not follow"
    if where := _first(_outside(v, c.scope) for v in c.values(*_DATA["fetch_writes"][c.name])):
        return f"writes {where}"
    saves = c.flag("O", "J", "--remote-name") if c.name == "curl" else not (c.values("-O") or c.flag("--spider"))
    return saves and _outside(".", c.scope) and f"saves into {_outside('.', c.scope)}" or None


# --------------------------------------------------------------------------- the command line, part by part
def _wrapper_reason(parsed: SimpleCommand) -> str | None:
    """Why a wrapper in front of the program changes what the check read: sudo, xargs, env -S …"""
    for word in parsed.words[: len(parsed.words) - len(parsed.argv)]:
        name = os.path.basename(word)
        if name in ("sudo", "doas"):
            return f"runs as another user ({name})"
        if name == "xargs":
            return f"runs {parsed.name} through xargs, with arguments read from its input that the check cannot see"
        if name in ("strace", "ltrace") or word in ("-S", "--split-string", "-C", "--chdir") or word.startswith("--split-string="):
            return f"runs {parsed.name} through a wrapper option the check does not follow ({word})"
    return None


def _program_reason(c: _Cmd) -> str | None:
    """The program itself: named at run time, a path outside the workspace and the system's folders, or unknown."""
    program = c.written[0] if c.written else c.name
    if _runtime(program) or (_GLOB.search(program) and program not in ("[", "[[")):
        return f"has a program only known when it runs ({program})"
    if "/" in program:
        real = [Path(os.path.realpath(p)) for p in _paths(program, c.scope) or []]
        trusted = {os.path.realpath(d) for d in (*_DATA["system_bin"], *os.environ.get("PATH", "").split(os.pathsep)) if d}
        if real and all(c.scope.inside(p) for p in real):  # the workspace's own program
            return None if c.name in SAFE_PROGRAMS else _in_workspace(c.scope, program) or _run_args(c, c.args)
        if not real or not all(str(p.parent) in trusted for p in real):
            return f"runs {program}, a program outside the workspace and the system's folders"
    if c.name in _DATA["opaque"] or c.name not in SAFE_PROGRAMS:
        return _DATA["opaque"].get(c.name, f"runs {c.name}, which is not a program known to be safe here")
    return None


def _judge_one(parsed: SimpleCommand, scope: _Scope) -> str | None:
    """Why one simple command needs approval, or None."""
    text = " ".join(parsed.words or parsed.argv or parsed.assigns) or "(redirection)"
    text = f"`{text if len(text) <= 100 else text[:97] + '...'}`"
    if parsed.note or parsed.function:
        return f"{text} cannot be read before it runs ({parsed.note})" if parsed.note else (
            f"{text} defines a function, so its name runs code the check does not follow")  # fmt: skip
    reason = _first(_assignment(word, scope) for word in parsed.assigns) or _wrapper_reason(parsed)
    reason = reason or _first(f"writes {_outside(t, scope)}" for t in parsed.writes if _outside(t, scope))
    reason = reason or _first(f"reads {s}, a file only known when it runs" for s in parsed.reads if _runtime(s))
    if reason or not parsed.argv or parsed.words[:1] in (["for"], ["select"], ["case"]):
        return reason and f"{text} {reason}"
    c = _Cmd.of(parsed, scope)
    reason = _program_reason(c)
    if reason is None and c.name not in _PRINTERS:
        reason = _first(f"has {a}, a word only known when it runs" for a in c.args if _runtime(a) and not a.startswith("<("))
    if reason is None and c.name in _set(_DATA["network"]) and any("$" in word for word in c.written[1:]):
        reason = "sends the value of a variable over the network (it may hold a secret the model never saw)"
    if reason is None and c.name in SAFE_PROGRAMS:  # (not a workspace program, judged above)
        reason = _RULES[c.name](c) if c.name in _RULES else _check(c, _DECLARED[c.name])
    return reason and (reason if reason[0] == "`" else f"{text} {reason}")  # a command it runs names itself


def _judge(commands: list[SimpleCommand], scope: _Scope) -> str | None:  # the first part that asks
    return _first(_judge_one(parsed, scope) for parsed in commands)


def approval_reason(command: str, cwd: Path, roots: Sequence[Path] | None = None, *,
                    hermes_home: Path | None = None) -> str | None:  # fmt: skip
    """Why ``command`` needs approval before it runs in ``cwd``, or None when it may run unasked.

    ``roots`` are the workspace (the working directory and ``tools.allowed_paths``); by default
    ``cwd`` alone. The reason names the part and what it does: ``\\`rm -rf ~\\` deletes ~
    (/home/me), outside the workspace``.
    """
    denied = command_denied_reason(command, cwd, hermes_home=hermes_home, recursive=True)
    if denied is not None:
        return f"it reads a path on the deny list ({denied})"
    scope = _Scope(tuple(Path(os.path.realpath(r)) for r in roots or [cwd]), [Path(os.path.abspath(cwd))], hermes_home)
    return _judge(simple_commands(command), scope)


#: The allow set: every program a command may run without asking (with the arguments its entry allows).
SAFE_PROGRAMS = frozenset(_DECLARED) | frozenset(_RULES)
