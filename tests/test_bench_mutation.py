"""``python -m bench mutation``: its module map and staging config, without running any mutation."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from bench import mutation

ROOT = Path(__file__).resolve().parents[1]
#: The risky modules issue 20 lists.
RISKY = {
    "kernel/store/", "kernel/providers/", "kernel/credentials/", "kernel/agent/calling.py", "kernel/agent/loop.py",
    "kernel/result_budget.py", "context_engines/compressor/", "kernel/redact.py", "kernel/skills/guard.py",
    "kernel/command_safety.py", "kernel/memory/manager.py", "kernel/host.py",
}  # fmt: skip


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bench", "mutation", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_every_risky_module_is_mapped_to_test_files_that_exist() -> None:
    _, targets, _, _ = mutation.load_config()
    assert set(targets) == RISKY
    for module, tests in targets.items():
        assert (ROOT / module).exists() and tests, module
        for test in tests:  # test files (or node ids), and pytest options such as --deselect
            assert (ROOT / test.removeprefix("--deselect=").split("::")[0]).is_file(), test


def test_list_prints_each_module_with_its_import_path_and_runs_nothing(tmp_path: Path) -> None:
    listed = bench("--list", "--out", str(tmp_path))
    assert listed.returncode == 0, listed.stderr
    lines = dict(line.split(" -> ", 1) for line in listed.stdout.splitlines())
    assert set(lines) == RISKY
    assert lines["kernel/store/"].startswith("hermes/kernel/store/*: tests/kernel/store/")
    assert lines["kernel/command_safety.py"].startswith("hermes/kernel/command_safety.py: tests/kernel/test_command_safety.py")
    assert list(tmp_path.iterdir()) == []  # nothing ran, nothing written
    helped = bench("--help")
    assert helped.returncode == 0 and "--list" in helped.stdout and "kernel/redact.py" in helped.stdout


def test_an_unknown_module_is_refused_naming_the_configured_ones() -> None:
    refused = bench("kernel/nope.py", "--list")
    assert refused.returncode == 2 and refused.stdout == ""
    assert "unknown module 'kernel/nope.py'" in refused.stderr and "kernel/redact.py" in refused.stderr


def test_the_staging_pyproject_limits_mutmut_to_one_module_and_its_tests() -> None:
    keys, targets, _, package_dir = mutation.load_config()
    pattern = mutation.staged_pattern("context_engines/compressor/", package_dir)
    assert pattern == "hermes/context_engines/compressor/*"
    text = mutation.mutmut_pyproject(keys, pattern, targets["context_engines/compressor/"], ["x.dist-info"],
                                     {"markers": ["slow: s"]})  # fmt: skip
    staged = tomllib.loads(text)
    assert staged["tool"]["mutmut"]["only_mutate"] == [pattern]
    assert staged["tool"]["mutmut"]["source_paths"] == ["hermes"]
    assert staged["tool"]["mutmut"]["pytest_add_cli_args_test_selection"] == targets["context_engines/compressor/"]
    assert staged["tool"]["mutmut"]["also_copy"] == ["x.dist-info"] and "targets" not in staged["tool"]["mutmut"]
    assert staged["tool"]["pytest"]["ini_options"]["markers"] == ["slow: s"]


def test_letter_case_inside_sql_is_equivalent_by_rule_and_nothing_else_is() -> None:
    same = mutation.sql_case_only
    assert same('-    row = conn.execute("SELECT cost_status FROM sessions WHERE id = ?", (sid,))\n'
                '+    row = conn.execute("select cost_status from sessions where id = ?", (sid,))')
    assert same('-        " ORDER BY id DESC LIMIT ?"\n+        " order by id desc limit ?"')
    # A quoted SQL value is data: its case matters.
    assert not same('-    "UPDATE sessions SET end_reason = \'compression\' WHERE id = ?"\n'
                    '+    "update sessions set end_reason = \'compression\' where id = ?"')
    # A Python string next to SQL is not SQL.
    assert not same('-    conn.execute("SELECT 1 FROM t WHERE k = ?", ("Value",))\n'
                    '+    conn.execute("SELECT 1 FROM t WHERE k = ?", ("VALUE",))')
    assert not same('-    return "Hello world"\n+    return "HELLO WORLD"')
    assert not same('-    "SELECT id FROM sessions"\n+    "XXSELECT id FROM sessionsXX"')
    assert not same('-    a = 1\n+    a = 2')
    assert not same("")


def test_resume_needs_the_folder_of_an_earlier_run() -> None:
    refused = bench("kernel/redact.py", "--resume")
    assert refused.returncode == 2
    assert "--resume needs --work DIR" in refused.stderr


def test_a_resumed_folder_keeps_kills_and_retests_survivors_with_fresh_inputs(tmp_path: Path) -> None:
    import json

    package, folder = tmp_path / "package", tmp_path / "run"
    (package / "hermes").mkdir(parents=True)
    (package / "hermes" / "new.py").write_text("NEW = 1\n")
    dist_info = package / "hermes_kernel-0.1.0.dist-info"
    dist_info.mkdir()
    (folder / "hermes").mkdir(parents=True)
    (folder / "hermes" / "old.py").write_text("OLD = 1\n")
    (folder / "hermes_kernel-0.0.9.dist-info").mkdir()
    meta = folder / "mutants" / "hermes" / "m.py.meta"
    meta.parent.mkdir(parents=True)
    codes = {"m.x_f__mutmut_1": 1, "m.x_f__mutmut_2": 0, "m.x_f__mutmut_3": 33, "m.x_f__mutmut_4": None, "m.x_f__mutmut_5": -24}
    meta.write_text(json.dumps({"exit_code_by_key": codes, "durations_by_key": {"m.x_f__mutmut_1": 0.5}}))
    (folder / "mutants" / "mutmut-stats.json").write_text("{}")
    keys, targets, _, _ = mutation.load_config()
    retested = mutation._stage(package, dist_info, folder, keys, "hermes/redact.py", targets["kernel/redact.py"], resume=True)
    assert retested == 2
    saved = json.loads(meta.read_text())
    assert saved["exit_code_by_key"] == {"m.x_f__mutmut_1": 1, "m.x_f__mutmut_2": None, "m.x_f__mutmut_3": None,
                                         "m.x_f__mutmut_4": None, "m.x_f__mutmut_5": -24}  # fmt: skip
    assert saved["durations_by_key"] == {"m.x_f__mutmut_1": 0.5}
    assert not (folder / "mutants" / "mutmut-stats.json").exists()  # the tests are mapped anew
    assert sorted(p.name for p in (folder / "hermes").iterdir()) == ["new.py"]
    assert sorted(p.name for p in folder.glob("*.dist-info")) == ["hermes_kernel-0.1.0.dist-info"]
    assert (folder / "tests" / "test_bench_mutation.py").is_file()
    assert tomllib.loads((folder / "pyproject.toml").read_text())["tool"]["mutmut"]["only_mutate"] == ["hermes/redact.py"]
    fresh = tmp_path / "fresh"
    assert mutation._stage(package, dist_info, fresh, keys, "hermes/redact.py", targets["kernel/redact.py"], resume=True) == 0
    assert sorted(p.name for p in (fresh / "mutants").iterdir()) == []


def test_property_tests_take_a_sample_only_under_mutmut(monkeypatch) -> None:
    from tests.helpers import MUTATION_EXAMPLES, examples

    monkeypatch.delenv("MUTANT_UNDER_TEST", raising=False)
    assert examples(300) == 300
    monkeypatch.setenv("MUTANT_UNDER_TEST", "")
    assert (examples(300), examples(10), examples(400, under_mutation=100)) == (MUTATION_EXAMPLES, 10, 100)
