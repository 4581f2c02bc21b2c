"""Test helpers shared across the suite."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

__all__ = ["FakeDistributions", "examples", "overlay_venv"]

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


def overlay_venv(path: Path) -> Path:
    """A new virtual environment that also sees this interpreter's site-packages.

    Installs go into the new environment only, so a test can ``pip install``
    and uninstall real packages without touching the environment running the
    suite, and without downloading hermes-kernel's dependencies again.
    Returns the new environment's python.
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
    parents = [p for p in {*site.getsitepackages(), sysconfig.get_paths()["purelib"]} if Path(p).is_dir()]
    lines = [f"import site; site.addsitedir({p!r})" for p in sorted(parents)]
    (Path(purelib) / "_hermes_test_overlay.pth").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return python
