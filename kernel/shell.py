"""Read a shell command line the way the shell would, far enough to judge it.

:func:`simple_commands` turns one command line into the simple commands it runs, each as a
normalised argv: quotes and escapes removed (``r"m"`` is ``rm``), simple variable
assignments expanded (``X=/; rm -rf $X``), wrappers dropped (``sudo``, ``env``, ``nohup``,
``timeout`` ...), absolute binary paths reduced to their name (``/bin/rm``), and the command
text inside ``sh -c``/``bash -c``/``eval``/``su -c``/``ssh host``, ``$(…)``, backticks,
``<(…)`` and ``find -exec`` read as commands of their own. Each simple command keeps the
pipeline it belongs to, so a check can see ``curl … | sh``.

This is not a shell: it reads, never runs, and a command built at run time (``$(cat f)``)
cannot be known. It only has to make the cheap disguises cost as much as the plain form.
What it cannot read through (text nested deeper than it follows, unbalanced quotes) it
says so in :attr:`SimpleCommand.note`, so a check that must be sure (the server's
allow-list, :mod:`hermes.kernel.approvals`) can refuse it. Each command also keeps
``words``: the words as they run, wrappers and leading assignments included; ``written``:
its argv as written, before variables are expanded and substitutions read (so a check can
tell ``$X -rf d`` from ``rm -rf d`` and a word whose text is only known at run time); its
here-documents and here-strings; and whether it names a function being defined.

It lives in the kernel because the kernel's allow-list and the terminal's command rule
(:mod:`hermes.kernel.command_safety`) read commands through it.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field

__all__ = ["SHELLS", "SimpleCommand", "simple_commands"]

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh"})
_MAX_DEPTH = 4
_OPERATORS = frozenset({";", "&&", "||", "&", "|", "|&", "(", ")", ";;", "!", "{", "}"})
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<", "<<", "<<<", "<>"})
_KEYWORDS = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "in", "case", "esac", "time", "!", "{", "}"})
# Wrappers that run the rest of the line as a command; the value says how many option
# arguments they take after them (flags with a value) before the command starts.
_WRAPPERS = {
    "sudo": {"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T"},
    "doas": {"-u", "-C"},
    "env": {"-u", "-C", "-S", "--unset", "--chdir"},
    "nohup": set(),
    "busybox": set(),
    "exec": {"-a"},
    "command": set(),
    "builtin": set(),
    "nice": {"-n", "--adjustment"},
    "ionice": {"-c", "-n", "-p"},
    "stdbuf": {"-i", "-o", "-e"},
    "chrt": set(),
    "taskset": set(),
    "setsid": set(),
    "unbuffer": set(),
    "caffeinate": set(),
    "xargs": {"-I", "-i", "-n", "-P", "-L", "-d", "-E", "-s", "-a", "--max-args", "--max-procs", "--delimiter"},
    "watch": {"-n", "-d", "--interval"},
    "time": set(),
    "strace": {"-e", "-o", "-p"},
}
_ASSIGNMENT_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)
_VAR_RE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_DECLARERS = frozenset({"export", "declare", "local", "readonly", "typeset"})
_DURATION_RE = re.compile(r"^\d+(?:\.\d+)?[smhd]?$")


@dataclass
class SimpleCommand:
    """One command as it would run: ``argv``, its redirections, and its place in a pipeline."""

    argv: list[str]
    writes: list[str] = field(default_factory=list)  # targets of >, >>, &>
    reads: list[str] = field(default_factory=list)  # sources of <
    pipeline: int = 0  # commands with the same number are joined by pipes
    stage: int = 0  # position in that pipeline
    depth: int = 0  # 0: the line itself; 1+: inside sh -c, $(…), eval …
    substituted: list[str] = field(default_factory=list)  # text of $(…)/`…`/<(…) in its words
    words: list[str] = field(default_factory=list)  # as run: wrappers and leading VAR=value kept
    note: str = ""  # set when the parser could not read this part (too deep, unbalanced quotes)
    # argv as written: variables unexpanded, $(…)/`…`/<(…)/>(…) as their text, the program's path kept
    written: list[str] = field(default_factory=list)
    assigns: list[str] = field(default_factory=list)  # VAR=value words before the program (or alone)
    heredocs: list[tuple[str, bool]] = field(default_factory=list)  # (<< / <<< text, the shell expands it)
    function: bool = False  # the name of a function being defined (`f() { …; }`)

    @property
    def name(self) -> str:
        return self.argv[0] if self.argv else ""

    @property
    def args(self) -> list[str]:
        return self.argv[1:]

    def flag(self, *names: str) -> bool:
        """True when an option is given: a long one (``--x``, ``--x=v``) or a letter of a short bundle (``-rf``)."""
        for arg in self.args:
            if arg == "--":
                return False
            for name in names:
                if (arg[:1] == "-" and arg[1:2] != "-" and name in arg[1:]) if len(name) == 1 else (
                        arg == name or arg.startswith(name + "=")):  # fmt: skip
                    return True
        return False

    def values(self, *names: str) -> list[str]:
        """The values of the options ``names``: ``-o X``, ``-oX``, ``--output X`` and ``--output=X``."""
        found, args = [], self.args
        for index, arg in enumerate(args):
            for name in names:
                if arg == name and index + 1 < len(args):
                    found.append(args[index + 1])
                elif arg.startswith(name + "=" if name[:2] == "--" else name) and len(arg) > len(name) > 1:
                    found.append(arg[len(name) + (name[:2] == "--") :])
        return found

    def positional(self, valued: frozenset[str] = frozenset()) -> list[str]:
        """The arguments that are neither options nor the values of the options in ``valued``."""
        found, skip, rest = [], False, False
        for arg in self.args:
            if skip:
                skip = False
            elif rest or arg == "-" or not arg.startswith("-"):
                found.append(arg)
            else:
                rest, skip = arg == "--", arg in valued
        return found

    def line(self) -> str:
        """argv and redirections as one normalised line (what the pattern table reads)."""
        parts = list(self.argv)
        parts += [f"> {target}" for target in self.writes]
        parts += [f"< {source}" for source in self.reads]
        return " ".join(parts)


def _matching(text: str, start: int, open_: str, close: str) -> int:
    """Index of the ``close`` matching the ``open_`` just before ``start`` (quotes respected), or -1."""
    depth, i, quote = 1, start, ""
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch == "\\":
            i += 2
            continue
        elif ch in "'\"":
            quote = ch
        elif text.startswith(open_, i) and open_ != close:
            depth += 1
        elif ch == close:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _lift_substitutions(text: str) -> tuple[str, list[str], list[str]]:
    """``text`` with ``$(…)``, backticks and ``<(…)``/``>(…)`` replaced by a placeholder, their insides and kinds."""
    inner: list[str] = []
    kinds: list[str] = []  # "$(", "`", "<(" or ">(" for each placeholder
    out: list[str] = []
    i = 0
    double = False  # inside "…": a ' is an ordinary character there
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            out.append(text[i : i + 2])
            i += 2
            continue
        if text[i] == '"':
            double = not double
        elif text[i] == "'" and not double:  # single quotes: no substitution inside
            end = text.find("'", i + 1)
            end = len(text) - 1 if end == -1 else end
            out.append(text[i : end + 1])
            i = end + 1
            continue
        if text.startswith(("$(", "<(", ">("), i) and not text.startswith("$((", i):
            end = _matching(text, i + 2, "(", ")")
            if end != -1:
                inner.append(text[i + 2 : end])
                kinds.append(text[i : i + 2])
                out.append(f"__SUBST{len(inner) - 1}__")
                i = end + 1
                continue
        if text[i] == "`":
            end = text.find("`", i + 1)
            if end != -1:
                inner.append(text[i + 1 : end])
                kinds.append("`")
                out.append(f"__SUBST{len(inner) - 1}__")
                i = end + 1
                continue
        out.append(text[i])
        i += 1
    return "".join(out), inner, kinds


_ANSI_C_RE = re.compile(r"\$'((?:[^'\\]|\\.)*)'")


def _ansi_c(match: re.Match[str]) -> str:
    """``$'\\x72m'`` as the plain word it stands for (``rm``)."""
    try:
        decoded = match.group(1).encode("latin-1", "backslashreplace").decode("unicode_escape")
    except (UnicodeDecodeError, UnicodeEncodeError):
        return match.group(0)
    return shlex.quote(decoded)


def _tokens(text: str) -> tuple[list[str], bool]:
    """The shell words and operators of ``text``, and False when its quotes do not balance."""
    if "$'" in text:
        text = _ANSI_C_RE.sub(_ansi_c, text)
    lexer = shlex.shlex(text.replace("\n", " ; "), posix=True, punctuation_chars=";&|<>()")
    lexer.whitespace_split = True
    lexer.commenters = ""  # '#' inside words (URLs, colours) is not a comment; a real one is harmless here
    try:
        return list(lexer), True
    except ValueError:  # unbalanced quotes: judge the words as they stand
        return text.replace("'", " ").replace('"', " ").split(), False


def _expand(word: str, variables: dict[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return variables.get(name, match.group(0))

    return _VAR_RE.sub(value, word)


def _program_start(argv: list[str], variables: dict[str, str]) -> int:
    """Index of the program in argv, past leading assignments (recorded in ``variables``), keywords and wrappers."""
    i = 0
    while i < len(argv):
        word = argv[i]
        assignment = _ASSIGNMENT_RE.match(word)
        if assignment:
            variables[assignment.group(1)] = assignment.group(2)
            i += 1
            continue
        if word in _KEYWORDS:
            i += 1
            continue
        name = os.path.basename(word) if "/" in word else word
        if name in _WRAPPERS and i == len(argv) - 1:
            break  # a bare `env` or `time` is a command of its own
        if name in _WRAPPERS:
            takes_value, wrapper = _WRAPPERS[name], i
            i += 1
            while i < len(argv) and argv[i].startswith("-") and argv[i] != "-":
                flag = argv[i]
                i += 1
                if flag in takes_value and i < len(argv):
                    i += 1
            if name == "env":
                while i < len(argv) and _ASSIGNMENT_RE.match(argv[i]):
                    i += 1
            if i >= len(argv):
                return wrapper  # only options after it (`env -S 'rm -rf ~'`): the wrapper is the program
            continue
        if name == "timeout":
            i += 1
            while i < len(argv) and argv[i].startswith("-"):
                i += 2 if argv[i] in ("-s", "-k", "--signal", "--kill-after") else 1
            if i < len(argv) and _DURATION_RE.match(argv[i]):
                i += 1
            continue
        break
    return i


def _base_name(argv: list[str]) -> list[str]:
    """argv with its program reduced to the base name (``/bin/rm`` is ``rm``)."""
    if argv and "/" in argv[0]:
        argv[0] = os.path.basename(argv[0].rstrip("/")) or argv[0]
    return argv


def _nested_text(argv: list[str]) -> list[str]:
    """Command text this argv runs itself: ``sh -c TEXT``, ``eval …``, ``su -c``, ``ssh host …``, ``find -exec``."""
    name, args = argv[0], argv[1:]
    if name in SHELLS or name in ("su", "runuser"):
        for index, arg in enumerate(args):
            if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:] and index + 1 < len(args):
                return [args[index + 1]]
            if arg == "--command" and index + 1 < len(args):
                return [args[index + 1]]
        return []
    if name == "eval":
        return [" ".join(args)]
    if name in ("ssh", "mosh"):
        positional = [a for a in args if not a.startswith("-")]
        return [" ".join(positional[1:])] if len(positional) > 1 else []
    if name == "find":
        texts = []
        for index, arg in enumerate(args):
            if arg in ("-exec", "-execdir", "-ok", "-okdir"):
                words = []
                for word in args[index + 1 :]:
                    if word in (";", "+", "\\;"):
                        break
                    words.append(shlex.quote(word) if word != "{}" else "FOUND")
                texts.append(" ".join(words))
        return texts
    return []


_HEREDOC_RE = re.compile(r"""<<(-?)[ \t]*(?:'([^'\n]*)'|"([^"\n]*)"|(\\?)([^\s;&|<>()'"]+))""")


def _split_heredocs(text: str) -> tuple[str, list[tuple[str, bool]]]:
    """``text`` without its here-document bodies, and each body with whether the shell expands it.

    Only a ``<<`` at the top level of ``text`` counts: one inside ``$(…)`` or backticks belongs
    to that substitution's text, which is read on its own with its body still in it.
    """
    if "<<" not in text:
        return text, []
    out: list[str] = []
    bodies: list[tuple[str, bool]] = []
    pending: list[tuple[str, bool, bool]] = []  # (delimiter, strip leading tabs, expands)
    i, quote, depth, backtick = 0, "", 0, False
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"':
                out.append(text[i : i + 2])
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch == "\\":
            out.append(text[i : i + 2])
            i += 2
            continue
        elif ch in "'\"":
            quote = ch
        elif text.startswith(("$(", "<(", ">("), i) and not text.startswith("<<", i):
            depth += 1
            out.append(text[i : i + 2])
            i += 2
            continue
        elif depth and ch in "()":
            depth += 1 if ch == "(" else -1
        elif ch == "`":
            backtick = not backtick
        elif text.startswith("<<<", i):
            out.append("<<<")
            i += 3
            continue
        elif text.startswith("<<", i) and not depth and not backtick and (match := _HEREDOC_RE.match(text, i)):
            quoted = match[2] is not None or match[3] is not None or match[4] == "\\"
            pending.append((match[2] or match[3] or match[5] or "", bool(match[1]), not quoted))
            out.append(match.group(0))
            i = match.end()
            continue
        elif ch == "\n" and pending:
            out.append("\n")
            i += 1
            for delimiter, strip, expands in pending:
                lines: list[str] = []
                while i < len(text):
                    end = text.find("\n", i)
                    end = len(text) if end == -1 else end
                    line = text[i:end].lstrip("\t") if strip else text[i:end]
                    i = end + 1
                    if line == delimiter:
                        break
                    lines.append(line)
                bodies.append(("".join(f"{line}\n" for line in lines), expands))
            pending = []
            continue
        out.append(ch)
        i += 1
    bodies += [("", expands) for _, _, expands in pending]  # `cat <<EOF` with no line after it
    return "".join(out), bodies


def simple_commands(command: str) -> list[SimpleCommand]:
    """Every simple command ``command`` would run, normalised, nested ones included."""
    found: list[SimpleCommand] = []
    _collect(command.replace("\\\n", " "), {}, found, depth=0, pipeline_base=[0])
    return found


def _collect(text: str, variables: dict[str, str], found: list[SimpleCommand], *, depth: int, pipeline_base: list[int]) -> None:
    if depth > _MAX_DEPTH:
        found.append(SimpleCommand([], depth=depth, note=f"command text nested more than {_MAX_DEPTH} levels deep"))
        return
    text, bodies = _split_heredocs(text)
    for body, expands in bodies:  # an unquoted here-document runs the substitutions in it
        for piece in _lift_substitutions(body)[1] if expands else []:
            _collect(piece, dict(variables), found, depth=depth + 1, pipeline_base=pipeline_base)
    lifted, inner, kinds = _lift_substitutions(text)
    substitutions: list[list[SimpleCommand]] = []
    for piece in inner:
        before = len(found)
        _collect(piece, dict(variables), found, depth=depth + 1, pipeline_base=pipeline_base)
        substitutions.append(found[before:])
    tokens, balanced = _tokens(lifted)
    if not balanced:
        found.append(SimpleCommand([], depth=depth, note="unbalanced quotes"))
    pipeline_base[0] += 1
    pipeline, stage = pipeline_base[0], 0
    words: list[str] = []
    writes: list[str] = []
    reads: list[str] = []
    heredocs: list[tuple[str, bool]] = []

    def unlift(word: str) -> str:
        return _unlift(_expand(word, variables), inner, kinds, substitutions)

    def finish(function: bool = False) -> None:
        nonlocal words, writes, reads, heredocs
        subst_text = [inner[int(m)] for w in words for m in re.findall(r"__SUBST(\d+)__", w)]
        as_run = [unlift(w) for w in words]
        start = _program_start(as_run, variables)
        argv = _base_name(as_run[start:])
        if argv and argv[0] in _DECLARERS:
            for word in argv[1:]:
                assignment = _ASSIGNMENT_RE.match(word)
                if assignment:
                    variables[assignment.group(1)] = assignment.group(2)
        assigns = [w for w in as_run[:start] if _ASSIGNMENT_RE.match(w)]
        if argv or assigns or writes or reads or heredocs:  # `> f` and `X=1` alone are commands too
            cmd = SimpleCommand(argv, [_expand(w, variables) for w in writes], [_expand(w, variables) for w in reads],
                                pipeline, stage, depth, subst_text, as_run if argv else [],
                                written=[_written(w, inner, kinds) for w in words[start:]], assigns=assigns,
                                heredocs=heredocs, function=function or as_run[:1] == ["function"])  # fmt: skip
            found.append(cmd)
            for nested in _nested_text(argv) if argv else []:
                _collect(nested, dict(variables), found, depth=depth + 1, pipeline_base=pipeline_base)
        words, writes, reads, heredocs = [], [], [], []

    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token in _REDIRECTS or (token[:-1].isdigit() and token[-1:] in "<>" and len(token) > 1):
            target = tokens[index + 1] if index + 1 < len(tokens) else ""
            if target in ("&", ">"):  # 2>&1, >& file
                target = tokens[index + 2] if index + 2 < len(tokens) else ""
                index += 1
            if words and words[-1].isdigit():
                words.pop()  # the fd number of 2> belongs to the redirection
            (reads if token.startswith("<") else writes).append(target)
            if token == "<<":
                heredocs.append(bodies.pop(0) if bodies else ("", True))
            elif token == "<<<":
                heredocs.append((unlift(target), "$" in target or "__SUBST" in target or "`" in target))
            index += 2
            continue
        if token == "()" or (token == "(" and tokens[index + 1 : index + 2] == [")"] and len(words) == 1):
            finish(function=True)  # `name() { …; }` or `name ( ) …`
            index += 1 if token == "()" else 2
            continue
        if token in _OPERATORS:
            finish()
            if token in ("|", "|&"):
                stage += 1
            else:
                pipeline_base[0] += 1
                pipeline, stage = pipeline_base[0], 0
            index += 1
            continue
        words.append(token)
        index += 1
    finish()


def _unlift(word: str, inner: list[str], kinds: list[str], substitutions: list[list[SimpleCommand]]) -> str:
    """A word with each placeholder put back: ``$(echo X)`` becomes X, others stay marked.

    A process substitution is never read as text: ``<(echo X)`` is a file whose *content* is X.
    """

    def back(match: re.Match[str]) -> str:
        number = int(match.group(1))
        commands = substitutions[number] if number < len(substitutions) else []
        if kinds[number] in ("<(", ">("):
            return f"{kinds[number]}{inner[number]})"
        if len(commands) == 1 and commands[0].name in ("echo", "printf") and not commands[0].writes:
            return " ".join(commands[0].argv[1:])
        return f"$({inner[number]})"

    return re.sub(r"__SUBST(\d+)__", back, word)


def _written(word: str, inner: list[str], kinds: list[str]) -> str:
    """A word as written: each placeholder back as the substitution's text, nothing expanded."""

    def back(match: re.Match[str]) -> str:
        number = int(match.group(1))
        kind = kinds[number]
        return f"`{inner[number]}`" if kind == "`" else f"{kind}{inner[number]})"

    return re.sub(r"__SUBST(\d+)__", back, word)
