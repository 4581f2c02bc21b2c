"""Hermes Agent's own tests of its memory providers, run against the compatibility layer.

The tests come from the 0.19.0 source release on PyPI (its sdist: the wheel
has no tests); the provider code from the same release. Nothing of Hermes
Agent's host is importable: the layer's stand-ins (``agent.*``,
``hermes_cli.*``, ``utils``, ``plugins.plugin_utils``, ...) are all they get,
so every import a provider makes from its host is checked by its own tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from tests.hermes_agent import LATEST, release_path, source_path

#: Words that name a bundled memory provider in a test file's name.
PROVIDERS = ("byterover", "hindsight", "holographic", "honcho", "mem0", "openviking", "retaindb", "supermemory")

#: Put the layer's stand-ins in place for the whole run, with ``plugins.memory`` the release's provider folder.
CONFTEST = """
    import os
    import sys

    from hermes.compat.hermes.standins import ProviderScope
    from hermes.kernel.home import active_home

    _active = ProviderScope(active_home()).active()
    _active.__enter__()
    sys.modules["plugins.memory"].__path__ = [os.environ["HERMES_TEST_PROVIDER_FOLDERS"]]
"""


def test_hermes_agents_own_provider_tests_all_collect_and_pass_against_the_layer(tmp_path: Path) -> None:
    tests = sorted(p for p in (source_path(LATEST) / "tests").rglob("test_*.py") if any(w in p.name for w in PROVIDERS))
    assert len(tests) >= 4, tests  # 0.19.0's sdist ships four, all about honcho
    run = tmp_path / "suite"
    run.mkdir()
    for test in tests:
        shutil.copy(test, run / test.name)
    (run / "conftest.py").write_text(textwrap.dedent(CONFTEST), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "PYTEST_", "HONCHO_"))}
    env.update(HERMES_HOME=str(tmp_path / "home"), PYTHONDONTWRITEBYTECODE="1",
               HERMES_TEST_PROVIDER_FOLDERS=str(release_path(LATEST) / "plugins" / "memory"))  # fmt: skip
    report = tmp_path / "report.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "-p", "no:xdist",
         "-o", "addopts=", "--rootdir", str(run), f"--junitxml={report}", str(run)],
        capture_output=True, text=True, env=env, cwd=run, timeout=300,
    )  # fmt: skip
    suite = ElementTree.parse(report).getroot().find("testsuite")
    assert suite is not None, proc.stdout[-3000:]
    counts = {k: int(suite.get(k, "0")) for k in ("tests", "failures", "errors", "skipped")}
    print(f"Hermes Agent {LATEST}'s provider tests against the layer: {len(tests)} files, {counts}")
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert counts["tests"] >= 29 and counts["failures"] == counts["errors"] == counts["skipped"] == 0, counts
