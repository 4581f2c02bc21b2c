"""Change one key of a ``config.yaml`` in place, leaving every other byte as it was.

A file Hermes Agent shares keeps its comments, order and keys: the key's
line is rewritten (or its block replaced), or new lines are added at the end
of the closest existing section. The result is parsed again and must equal
the old mapping with only that key changed; when the file's shape does not
allow that (flow mappings, anchors), ConfigError says so and nothing is written.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from hermes.kernel.errors import ConfigError

__all__ = ["set_in_text"]

# ``  name: value  # comment`` in block style; the name may be quoted.
_KEY_LINE = re.compile(r"""^(?P<indent> *)(?P<name>"[^"]*"|'[^']*'|[^\s#'"][^:#]*?)\s*:(?P<rest>(\s.*)?)$""")


def _flow(value: Any) -> str:
    """``value`` as one line of YAML (a scalar, or a flow list / mapping)."""
    import yaml

    text = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=1 << 30, sort_keys=False)
    if text.endswith("\n...\n"):
        text = text[: -len("\n...\n")]
    return text.strip()


def _is_content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _block_end(lines: list[str], start: int, indent: int) -> int:
    """Index after the last content line below lines[start] that belongs to its block.

    Deeper lines belong to it, and so do ``- item`` lines at its own indent
    (YAML lets a list sit level with its key). Blank and comment lines after
    the block stay outside it, so new keys go right after its last value.
    """
    last = start + 1
    for index in range(start + 1, len(lines)):
        line = lines[index]
        if not _is_content(line):
            continue
        depth = _indent(line)
        if depth < indent or (depth == indent and not line.lstrip().startswith("- ")):
            break
        last = index + 1
    return last


def _find(lines: list[str], lo: int, hi: int, name: str) -> tuple[int, int] | None:
    """(line index, indent) of key ``name`` directly inside lines[lo:hi] (the shallowest keys there)."""
    depth: int | None = None
    for index in range(lo, hi):
        line = lines[index]
        if not _is_content(line):
            continue
        match = _KEY_LINE.match(line)
        indent = _indent(line)
        if depth is None:
            depth = indent
        if indent != depth or match is None:
            continue
        found = match.group("name").strip()
        if found[:1] in "'\"":
            found = found[1:-1]
        if found == name:
            return index, indent
    return None


def set_in_text(text: str, key: str, value: Any) -> str:
    """``text`` with dotted ``key`` set to ``value``; other lines unchanged."""
    import yaml

    before = yaml.safe_load(text) or {}
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    parts = key.split(".")
    lo, hi, parent_indent = 0, len(lines), -1
    node: Any = before
    for depth, part in enumerate(parts):
        hit = _find(lines, lo, hi, part)
        if hit is None:
            lines[hi:hi] = _new_lines(parts[depth:], value, _child_indent(lines, lo, hi, parent_indent))
            break
        index, indent = hit
        match = _KEY_LINE.match(lines[index])
        assert match is not None
        rest = match.group("rest") or ""
        end = _block_end(lines, index, indent)
        if depth == len(parts) - 1:
            tail = _comment(rest)
            lines[index:end] = [f"{' ' * indent}{match.group('name')}: {_flow(value)}{tail}\n"]
            break
        node = node.get(part) if isinstance(node, dict) else None
        if (rest.strip() and not rest.strip().startswith("#")) or not isinstance(node, dict):
            # A value where a section is asked for (inline, or a block list or scalar on the
            # lines below): it becomes that section, as `config set` does anywhere.
            lines[index:end] = [f"{' ' * indent}{match.group('name')}:\n", *_new_lines(parts[depth + 1:], value, indent + 2)]
            break
        lo, hi, parent_indent = index + 1, end, indent
    result = "".join(lines)
    expected = copy.deepcopy(before)
    node = expected
    for part in parts[:-1]:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[parts[-1]] = value
    try:
        after = yaml.safe_load(result)
    except yaml.YAMLError:
        after = None
    if after != expected:
        raise ConfigError(f"cannot set {key} in place (the file uses a YAML layout this editor does not change); "
                          "edit config.yaml by hand")  # fmt: skip
    return result


def _comment(rest: str) -> str:
    """The trailing ``# comment`` after a key's value (kept when the value changes), else ''."""
    rest = rest.rstrip("\n")
    if rest.strip().startswith("#"):
        return " " + rest.strip()
    match = re.match(r"^(\s*[^'\"#\s][^#]*?)(\s+#.*)$", rest)
    return match.group(2) if match else ""


def _child_indent(lines: list[str], lo: int, hi: int, parent_indent: int) -> int:
    """The indent of keys inside a section: as its first child has it, else two more than the parent."""
    for index in range(lo, hi):
        if _is_content(lines[index]):
            return _indent(lines[index])
    return parent_indent + 2 if parent_indent >= 0 else 0


def _new_lines(parts: list[str], value: Any, indent: int) -> list[str]:
    out = []
    for depth, part in enumerate(parts[:-1]):
        out.append(f"{' ' * (indent + 2 * depth)}{_flow(part)}:\n")  # quoted when YAML would read `on` as true
    out.append(f"{' ' * (indent + 2 * (len(parts) - 1))}{_flow(parts[-1])}: {_flow(value)}\n")
    return out
