"""``python -m bench mutation [MODULE ...] [--list] [--jobs N] [--work DIR [--resume]]``: mutation scores of the risky modules.

Plants mutmut's one-line bugs in each module of ``[tool.mutmut.targets]``
(pyproject.toml), runs that module's tests against each, and prints the score
per module (killed / mutants, equivalent ones excluded) and every survivor
with its diff. Slow (minutes per module on 2 cores), so not part of .ci/run:
run it before closing an issue that changed one of these modules.

Why a staging folder: this repository maps its top-level folders (kernel/,
plugins/, ...) onto the ``hermes.*`` namespace through package-dir and an
editable install, so the ``mutants/`` copy mutmut makes of the source folders
would never be what the tests import. Instead the package is installed with
``pip install --no-deps --target`` into a folder laid out as ``hermes/...``
with its dist-info (the entry points the plugin host loads), the tests are
copied next to it, and mutmut runs there with ``source_paths = ["hermes"]``;
``PYTHONPATH`` points at mutmut's ``mutants/`` copy so the CLI subprocesses
some tests start import the mutated code too.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

__all__ = ["load_config", "main", "mutmut_pyproject", "sql_case_only", "staged_pattern"]

ROOT = Path(__file__).resolve().parents[1]
#: Repository files some mapped tests read next to tests/ (the bundled skills pack).
EXTRA_FILES = ("skills",)
#: mutmut exit codes that count as a kill: a failing test, a pytest error, a timeout.
KILLED = {"killed", "timeout"}
#: mutmut exit codes of a survivor: the tests passed (0), or no test reaches the function (33).
SURVIVED = (0, 33)


def load_config(pyproject: Path = ROOT / "pyproject.toml") -> tuple[dict[str, Any], dict[str, list[str]], dict[str, str], dict[str, str]]:
    """mutmut's own keys, the module → tests map, the equivalent mutants (name → why), the package-dir map."""
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    section = dict(data["tool"]["mutmut"])
    targets = section.pop("targets")
    equivalent = section.pop("equivalent", {})
    package_dir = data["tool"]["setuptools"]["package-dir"]
    return section, targets, equivalent, package_dir


def staged_pattern(module: str, package_dir: dict[str, str]) -> str:
    """``kernel/redact.py`` → ``hermes/kernel/redact.py``; a folder ``kernel/store/`` → ``hermes/kernel/store/*``."""
    folder, _, rest = module.partition("/")
    for name, where in package_dir.items():
        if where == folder:
            path = name.replace(".", "/") + ("/" + rest if rest else "")
            return path.rstrip("/") + "/*" if module.endswith("/") else path
    raise SystemExit(f"{module}: not under any [tool.setuptools.package-dir] folder ({', '.join(package_dir.values())})")


def _toml(value: Any) -> str:
    # JSON strings, numbers, booleans and arrays of them are valid TOML values.
    return json.dumps(value)


def mutmut_pyproject(keys: dict[str, Any], pattern: str, tests: list[str], also_copy: list[str], pytest_ini: dict[str, Any]) -> str:
    """The staging folder's pyproject.toml: mutmut's keys for one module, and the project's pytest settings."""
    lines = ["[tool.mutmut]"]
    lines += [f"{k} = {_toml(v)}" for k, v in keys.items()]
    lines += [f"only_mutate = {_toml([pattern])}", f"pytest_add_cli_args_test_selection = {_toml(tests)}",
              f"also_copy = {_toml(also_copy)}", "", "[tool.pytest.ini_options]"]  # fmt: skip
    lines += [f"{k} = {_toml(v)}" for k, v in pytest_ini.items()]
    return "\n".join(lines) + "\n"


def _install(target: Path) -> Path:
    """The package laid out as ``hermes/...`` plus its dist-info; returns the dist-info folder."""
    shutil.rmtree(target, ignore_errors=True)  # pip --target never replaces what an earlier run left
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(ROOT)],
                   check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    (dist_info,) = target.glob("hermes_kernel-*.dist-info")
    return dist_info


def _stage(package: Path, dist_info: Path, folder: Path, keys: dict[str, Any], pattern: str, tests: list[str],
           resume: bool = False) -> int:  # fmt: skip
    """Lay out ``folder`` for mutmut; returns how many earlier verdicts a resumed run re-tests."""
    if resume and (folder / "mutants").is_dir():
        return _restage(package, dist_info, folder, keys, pattern, tests)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    _copy_inputs(package, dist_info, folder)
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pytest_ini = data["tool"]["pytest"]["ini_options"]
    text = mutmut_pyproject(keys, pattern, tests, [dist_info.name, *EXTRA_FILES], pytest_ini)
    (folder / "pyproject.toml").write_text(text, encoding="utf-8")
    # PYTHONPATH names mutants/ from mutmut's start: a folder missing then would be cached as
    # "no importer" for the whole run, and the tests (`import tests.helpers`) would not import.
    (folder / "mutants").mkdir()
    return 0


def _copy_inputs(package: Path, dist_info: Path, folder: Path) -> None:
    """The installed package, its dist-info, the tests and the extra files, into ``folder``."""
    shutil.copytree(package / "hermes", folder / "hermes")
    shutil.copytree(dist_info, folder / dist_info.name)
    shutil.copytree(ROOT / "tests", folder / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    for name in EXTRA_FILES:
        shutil.copytree(ROOT / name, folder / name, ignore=shutil.ignore_patterns("__pycache__"))


def _restage(package: Path, dist_info: Path, folder: Path, keys: dict[str, Any], pattern: str, tests: list[str]) -> int:
    """Refresh an earlier run's folder, keeping the verdicts that new tests cannot change.

    Adding tests can kill a survivor but never revive a killed mutant, so a killed mutant
    keeps its verdict; survivors and untested mutants are reset to be tested again, and
    mutmut itself resets every mutant of a function whose source changed. The test-to-function
    map is rebuilt (new tests must be run against the functions they reach). What this cannot
    see: a test weakened or removed, or a change outside a function that alters its mutants;
    a full run (without --resume) checks those.
    """
    for old in [folder / "hermes", *folder.glob("*.dist-info"), folder / "tests", *(folder / n for n in EXTRA_FILES)]:
        shutil.rmtree(old, ignore_errors=True)
    _copy_inputs(package, dist_info, folder)
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    text = mutmut_pyproject(keys, pattern, tests, [dist_info.name, *EXTRA_FILES], data["tool"]["pytest"]["ini_options"])
    (folder / "pyproject.toml").write_text(text, encoding="utf-8")
    # Without its stats (which hold the config's fingerprint) mutmut maps the tests anew
    # instead of resetting every verdict because the test list changed.
    (folder / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    reset = 0
    for meta in (folder / "mutants").rglob("*.py.meta"):
        saved = json.loads(meta.read_text(encoding="utf-8"))
        codes = saved["exit_code_by_key"]
        for name, code in codes.items():
            if code in (None, *SURVIVED):
                reset += code is not None
                codes[name] = None
        meta.write_text(json.dumps(saved), encoding="utf-8")
    return reset


def _env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "MUTANT_UNDER_TEST"))}
    # Subprocesses (the CLI some tests run) import the mutated copy, never the editable install.
    env["PYTHONPATH"] = str(folder / "mutants")
    return env


def _results(folder: Path, equivalent: dict[str, str]) -> dict[str, Any]:
    from mutmut.stats import status_by_exit_code

    statuses: dict[str, str] = {}
    for meta in sorted((folder / "mutants").rglob("*.py.meta")):
        for name, code in json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"].items():
            statuses[name] = status_by_exit_code[code]
    # A mutant listed as equivalent that a test kills is counted as killed (and reported, to drop it from the list).
    excluded = {n for n, s in statuses.items() if n in equivalent and s not in KILLED}
    counted = {n: s for n, s in statuses.items() if n not in excluded and s != "skipped"}
    killed = sum(1 for s in counted.values() if s in KILLED)
    return {
        "mutants": len(counted),
        "killed": killed,
        "score": round(100 * killed / len(counted), 1) if counted else None,
        "equivalent": sorted(excluded),
        "killed_but_listed_equivalent": sorted(n for n in counted if n in equivalent),
        "survivors": {n: s for n, s in counted.items() if s not in KILLED},
    }


#: Run in the staging folder: every survivor's diff in one process (``mutmut show`` costs a start-up each).
_DIFFS = """
import json, sys
from mutmut.mutation.diff_apply import find_mutant, get_diff_for_mutant
print(json.dumps({n: get_diff_for_mutant(n, path=find_mutant(n).path) for n in json.load(sys.stdin)}))
"""


def _diffs(folder: Path, names: list[str]) -> dict[str, str]:
    """The changed lines of each mutant, as ``-old`` / ``+new``."""
    if not names:
        return {}
    shown = subprocess.run([sys.executable, "-c", _DIFFS], cwd=folder, env=_env(folder), input=json.dumps(names),
                           capture_output=True, text=True)  # fmt: skip
    if shown.returncode != 0:
        return {n: f"(no diff: {shown.stderr.strip().splitlines()[-1:]})" for n in names}
    return {
        name: "\n".join(line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---")))
        for name, diff in json.loads(shown.stdout).items()
    }


def run_module(module: str, *, work: Path, package: Path, dist_info: Path, jobs: int, resume: bool = False) -> dict[str, Any]:
    """Stage, mutate and test one module; returns its score and survivors."""
    keys, targets, equivalent, package_dir = load_config()
    folder = work / module.strip("/").replace("/", "_")
    retested = _stage(package, dist_info, folder, keys, staged_pattern(module, package_dir), targets[module], resume)
    started = time.monotonic()
    with (folder / "mutmut.log").open("w") as log:
        done = subprocess.run([sys.executable, "-m", "mutmut", "run", "--max-children", str(jobs)], cwd=folder,
                              env=_env(folder), stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    result = _results(folder, equivalent)
    result.update(module=module, seconds=round(time.monotonic() - started), exit_code=done.returncode, log=str(folder / "mutmut.log"),
                  resumed=resume, survivors_retested=retested)  # fmt: skip
    diffs = _diffs(folder, list(result["survivors"]))
    # SQL keywords and unquoted names ignore case: such survivors are equivalent by rule.
    result["sql_case"] = sorted(n for n in result["survivors"] if sql_case_only(diffs.get(n, "")))
    for name in result["sql_case"]:
        del result["survivors"][name]
    result["mutants"] -= len(result["sql_case"])
    result["score"] = round(100 * result["killed"] / result["mutants"], 1) if result["mutants"] else None
    result["diffs"] = {n: diffs[n] for n in result["survivors"]}
    return result


_SQL_WORD = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|DROP|ALTER|PRAGMA|BEGIN|COMMIT|ROLLBACK|FROM|WHERE|VALUES|JOIN|ORDER BY|GROUP BY)\b", re.I)


def sql_case_only(diff: str) -> bool:
    """True when a mutant only changed the letter case inside one SQL text without quoted values
    (``"SELECT id FROM sessions"`` → ``"select id from sessions"``): SQLite and PostgreSQL read
    keywords and unquoted names alike in any case, so no test can tell. A string with a quoted
    value (``'compression'``) or a string that is not SQL never qualifies."""
    old = [line[1:] for line in diff.splitlines() if line.startswith("-")]
    new = [line[1:] for line in diff.splitlines() if line.startswith("+")]
    if len(old) != 1 or len(new) != 1 or old[0] == new[0] or old[0].lower() != new[0].lower() or len(old[0]) != len(new[0]):
        return False
    before, after = old[0], new[0]
    first = next(i for i, (a, b) in enumerate(zip(before, after)) if a != b)
    last = max(i for i, (a, b) in enumerate(zip(before, after)) if a != b)
    start, end = before.rfind('"', 0, first), before.find('"', last + 1)
    if start < 0 or end < 0:
        return False
    literal = before[start + 1 : end]
    return bool(_SQL_WORD.search(literal)) and "'" not in literal


def _report(result: dict[str, Any], equivalent: dict[str, str]) -> None:
    score = "no mutants" if result["score"] is None else f"{result['score']} %"
    print(f"{result['module']}: {result['killed']}/{result['mutants']} killed ({score}), "
          f"{len(result['equivalent']) + len(result.get('sql_case', []))} equivalent, {result['seconds']} s")  # fmt: skip
    if result.get("resumed"):
        print(f"  resumed: killed mutants kept from the earlier run; {result['survivors_retested']} survivors and every untested"
              " or changed mutant tested again")  # fmt: skip
    if result["exit_code"] != 0:
        print(f"  mutmut exited with {result['exit_code']}; see {result['log']}")
    if result.get("sql_case"):
        print(f"  equivalent by rule (letter case inside SQL): {len(result['sql_case'])}")
    for name in result["equivalent"]:
        print(f"  equivalent {name}: {equivalent[name]}")
    for name in result["killed_but_listed_equivalent"]:
        print(f"  killed, yet listed in [tool.mutmut.equivalent] (remove it): {name}")
    for name, status in result["survivors"].items():
        print(f"  {status}: {name}")
        for line in result["diffs"][name].splitlines():
            print(f"      {line}")


def main(argv: list[str] | None = None) -> int:
    keys, targets, equivalent, package_dir = load_config()
    parser = argparse.ArgumentParser(prog="python -m bench mutation", description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help=f"modules from [tool.mutmut.targets] (default: all): {', '.join(targets)}")
    parser.add_argument("--list", action="store_true", help="print each module, its staged path and its tests; run nothing")
    parser.add_argument("--jobs", type=int, default=1, help="mutants tested at once (default 1: the machine is shared)")
    parser.add_argument("--work", type=Path, default=None, help="staging folder (default: a temporary one, removed)")
    parser.add_argument("--resume", action="store_true",
                        help="with --work: keep an earlier run's killed mutants there and test only survivors, "
                        "untested mutants and changed functions again (after adding tests)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results", help="folder for mutation.json")
    args = parser.parse_args(argv)
    unknown = [m for m in args.modules if m not in targets]
    if unknown:
        parser.error(f"unknown module {unknown[0]!r}; configured: {', '.join(targets)}")
    modules = args.modules or list(targets)
    if args.resume and args.work is None:
        parser.error("--resume needs --work DIR: the folder of the run to resume")
    if args.list:
        for module in modules:
            print(f"{module} -> {staged_pattern(module, package_dir)}: {' '.join(targets[module])}")
        return 0
    try:
        import mutmut  # noqa: F401
    except ImportError:
        print("mutmut is not installed; run: pip install -e '.[dev]'", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="hermes-mutation-"))
    results = []
    try:
        dist_info = _install(work / "package")
        for module in modules:  # one at a time: each run already uses --jobs processes
            result = run_module(module, work=work, package=work / "package", dist_info=dist_info, jobs=args.jobs, resume=args.resume)
            _report(result, equivalent)
            results.append(result)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "mutation.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0 if all(r["exit_code"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
