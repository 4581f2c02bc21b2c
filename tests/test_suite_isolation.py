"""The suite never sees hermes plugins that happen to be installed where it runs.

A user who follows the README (``hermes plugin install ./examples/hermes-hello``)
into the test environment must not change what any test sees: in process the
entry-point scan leaves such distributions out, and the test virtual
environments (``overlay_venv``) do not link their metadata.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers import FakeDistributions, _filtered_site, foreign_plugin_distributions


def test_a_plugin_installed_beside_the_suite_is_found_then_left_out_of_overlays(tmp_path: Path, monkeypatch) -> None:
    site = tmp_path / "site"
    dists = FakeDistributions(site)
    dists.add("hermes-stray", {"hermes.plugins": {"stray": "stray_mod"}}, {"stray_mod": "X = 1\n"})
    dists.add("plain-lib", {"console_scripts": {"plain": "plain_mod:main"}}, {"plain_mod": "def main(): pass\n"})
    monkeypatch.syspath_prepend(str(site))
    found = foreign_plugin_distributions()
    assert "hermes-stray" in found and "plain-lib" not in found
    view = _filtered_site(site, tmp_path / "view", {found["hermes-stray"].resolve()})
    probe = ("import site, sys; site.addsitedir(sys.argv[1]); from importlib import metadata; "
             "print(sorted(d.metadata['Name'] for d in metadata.distributions() if d.metadata['Name'] in ('hermes-stray', 'plain-lib')))")  # fmt: skip
    seen = subprocess.run([sys.executable, "-S", "-c", probe, str(view)], capture_output=True, text=True, check=True)
    assert seen.stdout.strip() == "['plain-lib']"
    assert (view / "stray_mod.py").exists()  # only the metadata is hidden: imports still resolve


def test_in_process_scans_leave_out_what_was_installed_when_the_suite_started(fake_dists, monkeypatch) -> None:
    import tests.conftest as suite
    from hermes.kernel.host import PluginHost

    fake_dists.add("hermes-preinstalled", {"hermes.plugins": {"pre": "pre_mod"}}, {"pre_mod": "X = 1\n"})
    fake_dists.add("hermes-made-here", {"hermes.plugins": {"here": "here_mod"}}, {"here_mod": "X = 1\n"})
    monkeypatch.setattr(suite, "_FOREIGN_PLUGINS", frozenset({"hermes-preinstalled"}))
    names = {row.distribution for row in PluginHost().installed(everything=True)}
    assert "hermes-made-here" in names and "hermes-preinstalled" not in names
