"""Test helpers shared across the suite."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

__all__ = ["FakeDistributions", "examples", "foreign_plugin_distributions", "overlay_venv"]

#: Generated examples per property test under mutmut (``python -m bench mutation``), which runs a
#: function's tests once per mutant: the suite keeps its full count, a mutant run a sample.
MUTATION_EXAMPLES = 25


def examples(count: int, under_mutation: int = MUTATION_EXAMPLES) -> int:
    """``count`` hypothesis examples, or ``under_mutation`` when mutmut is running the test
    (mutmut sets MUTANT_UNDER_TEST for its whole run; a normal pytest run never has it)."""
    return min(count, under_mutation) if "MUTANT_UNDER_TEST" in os.environ else count


class FakeDistributions:
    """Write distributions (``*.dist-info`` plus modules) into a folder on sys.path.

    importlib.metadata discovers them exactly like pip-installed packages, so
    the plugin host is exercised through real entry-point discovery without
    running pip for every case.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        self._modules: set[str] = set()

    def add(
        self,
        name: str,
        entry_points: dict[str, dict[str, str]],
        modules: dict[str, str] | None = None,
        version: str = "1.0.0",
    ) -> None:
        info = self.root / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
        )
        lines = []
        for group, eps in entry_points.items():
            lines.append(f"[{group}]")
            lines += [f"{ep_name} = {value}" for ep_name, value in eps.items()]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        for module, source in (modules or {}).items():
            path = self.root / (module.replace(".", "/") + ".py")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(source), encoding="utf-8")
            self._modules.add(module.split(".")[0])

    def unload_modules(self) -> None:
        """Forget imported fake modules so the next test imports its own."""
        for name in list(sys.modules):
            if name.split(".")[0] in self._modules:
                del sys.modules[name]


def foreign_plugin_distributions() -> dict[str, Path]:
    """Distributions installed in this environment, other than hermes-kernel, with hermes entry points.

    Name → their ``.dist-info`` folder. The suite never loads them (a user's
    ``hermes plugin install`` into the test venv must not change what tests see).
    """
    from importlib import metadata

    from hermes.kernel.host import BUILTIN_DISTRIBUTION, GROUPS, normalize_dist_name

    found: dict[str, Path] = {}
    for dist in metadata.distributions():
        name = normalize_dist_name(dist.metadata["Name"] or "")
        folder = getattr(dist, "_path", None)
        if name != BUILTIN_DISTRIBUTION and folder is not None and any(ep.group in GROUPS for ep in dist.entry_points):
            found[name] = Path(folder)
    return found


def _filtered_site(site_dir: Path, into: Path, hidden: set[Path]) -> Path:
    """``into``: links to everything in ``site_dir`` except the ``hidden`` dist-info folders."""
    into.mkdir(parents=True, exist_ok=True)
    for child in site_dir.iterdir():
        if child.resolve() not in hidden:
            (into / child.name).symlink_to(child)
    return into


def overlay_venv(path: Path) -> Path:
    """A new virtual environment that also sees this interpreter's site-packages.

    Installs go into the new environment only, so a test can ``pip install``
    and uninstall real packages without touching the environment running the
    suite, and without downloading hermes-kernel's dependencies again.
    Third-party hermes plugins installed in the suite's environment are left
    out (their metadata is not linked), so the overlay starts with hermes-kernel's
    own entry points only. Returns the new environment's python.
    """
    import site
    import subprocess
    import sysconfig

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    python = path / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    parents = [Path(p) for p in {*site.getsitepackages(), sysconfig.get_paths()["purelib"]} if Path(p).is_dir()]
    hidden = {folder.resolve() for folder in foreign_plugin_distributions().values()}
    if hidden:
        parents = [_filtered_site(p, path / "suite-site" / str(n), hidden) for n, p in enumerate(sorted(parents))]
    lines = [f"import site; site.addsitedir({str(p)!r})" for p in sorted(parents)]
    (Path(purelib) / "_hermes_test_overlay.pth").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return python
