"""Every ``host.call`` in the code names a hook spec and passes exactly its arguments.

``PluginHost.call`` checks both only once a listener exists (before that there is no
pluggy manager, so a process without plugins never imports pluggy); this reads the
source instead, so a misspelt hook or argument fails here even where no test has a plugin.
"""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

from hermes.kernel import hookspecs

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("kernel", "plugins", "compat", "context_engines", "memory_providers")


def _specs() -> dict[str, set[str]]:
    specs = {}
    for name, func in vars(hookspecs).items():
        if callable(func) and hasattr(func, f"{hookspecs.PROJECT_NAME}_spec"):
            specs[name] = set(inspect.signature(func).parameters)
    return specs


def _problems(source: str, where: str, specs: dict[str, set[str]]) -> list[str]:
    """Calls ``X.call("name", ...)`` on something named like a host that do not match a spec."""
    problems = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "call"):
            continue
        receiver = ast.unparse(node.func.value)
        if not receiver.endswith("host") or not node.args or not isinstance(node.args[0], ast.Constant):
            continue
        hook = node.args[0].value
        if hook not in specs:
            problems.append(f"{where}:{node.lineno}: unknown hook {hook!r}")
            continue
        if any(k.arg is None for k in node.keywords):  # **kwargs: checked at run time
            continue
        given = {k.arg for k in node.keywords}
        if given != specs[hook]:
            problems.append(f"{where}:{node.lineno}: {hook} takes {sorted(specs[hook])}, given {sorted(given)}")
    return problems


def test_every_call_site_matches_its_spec() -> None:
    specs = _specs()
    sites, problems = 0, []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            sites += source.count(".call(")
            problems += _problems(source, str(path.relative_to(ROOT)), specs)
    assert sites >= 10  # the walk found the kernel's call sites
    assert problems == []


def test_the_check_catches_a_wrong_name_and_a_missing_argument() -> None:
    specs = _specs()
    source = 'self.host.call("on_tea_time", cup=1)\nagent.host.call("prefetch", session_id="s")\n'
    problems = _problems(source, "x.py", specs)
    assert problems == [
        "x.py:1: unknown hook 'on_tea_time'",
        "x.py:2: prefetch takes ['query', 'session_id'], given ['session_id']",
    ]


def test_hermes_help_and_a_host_without_listeners_do_not_import_pluggy(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from hermes.kernel.host import PluginHost\n"
        "host = PluginHost(load_plugins='')\n"
        "host.load_plugins()\n"
        "assert host.call('on_turn_start', session_id='s', turn=1, message='m') == []\n"
        "print('pluggy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_impl_marker_attribute_is_pluggys() -> None:
    from hermes.kernel import host

    assert host._IMPL_ATTR == f"{hookspecs.PROJECT_NAME}_impl"
    assert hasattr(hookspecs.on_turn_start, f"{hookspecs.PROJECT_NAME}_spec")
