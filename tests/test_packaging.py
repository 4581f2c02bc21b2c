"""Packaging: every package folder is declared, and a regular (non-editable) install works."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_package_folder_is_declared() -> None:
    setuptools = _pyproject()["tool"]["setuptools"]
    mapping = setuptools["package-dir"]
    declared = set(setuptools["packages"])
    found = set()
    for import_name, folder in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder)
            found.add(".".join([import_name, *relative.parts]))
    assert found == declared, f"declare these in pyproject.toml: {sorted(found - declared)}; stale: {sorted(declared - found)}"


def test_console_script_and_version() -> None:
    from hermes.kernel import __version__

    assert _pyproject()["project"]["scripts"] == {"hermes": "hermes.kernel.cli:main"}
    result = subprocess.run([sys.executable, "-m", "hermes.kernel", "--version"], capture_output=True, text=True)
    assert result.stdout == f"hermes-kernel {__version__}\n"


@pytest.mark.slow
def test_regular_install_from_a_wheel(tmp_path: Path) -> None:
    """``pip install .`` (a built wheel, not an editable link) gives a working hermes."""
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(wheels), str(ROOT)],
        check=True, cwd=tmp_path,
    )
    (wheel,) = wheels.glob("hermes_kernel-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for expected in (
        "hermes/kernel/__init__.py",
        "hermes/kernel/cli/__init__.py",
        "hermes/kernel/py.typed",
        "hermes/kernel/command_safety.toml",  # the terminal's allow set, read at import
        "hermes/plugins/__init__.py",
        "hermes/context_engines/__init__.py",
        "hermes/memory_providers/__init__.py",
        "hermes/skills/__init__.py",
    ):
        assert expected in names, expected
    assert not any(n.startswith(("hermes/__init__", "tests/", "bench/", "examples/")) for n in names)

    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target), str(wheel)],
        check=True,
    )
    # -S: no site-packages processing, so the editable install of the suite
    # cannot answer; dependencies come from PYTHONPATH.
    deps = [p for p in sys.path if p.endswith("site-packages")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), *deps])}
    probe = (
        "import hermes.kernel, sys; "
        "from hermes.kernel.cli import main; "
        "print(hermes.kernel.__file__); main(['--version'])"
    )
    result = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    location, version = result.stdout.splitlines()
    assert location.startswith(str(target))
    assert version.startswith("hermes-kernel ")
