"""``hermes auth add|list|remove|reset`` through the real console script and CliRunner."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from typer.testing import CliRunner

from hermes.kernel import PluginHost
from hermes.kernel.cli import build_app

KEY = "sk-proj-0123456789abcdefghijKLMN"


def test_add_list_remove_reset_in_a_subprocess(hermes, hermes_home: Path) -> None:
    added = hermes("auth", "add", "openai", "--label", "work", input=KEY + "\n")
    assert added.returncode == 0, added.stderr
    assert "sk-p...KLMN" in added.stdout and KEY not in added.stdout
    assert stat.S_IMODE((hermes_home / "auth.json").stat().st_mode) == 0o600
    assert hermes("auth", "add", "anthropic", "--key", "sk-ant-zzzzzzzzzzzzzzzzzzzz").returncode == 0

    listed = hermes("auth", "list", "--json", env={"OPENAI_API_KEY": "sk-env-yyyyyyyyyyyyyyyyyyyy"})
    rows = json.loads(listed.stdout)
    assert [(r["provider"], r["label"], r["source"]) for r in rows] == [
        ("anthropic", "key-1", "auth.json"), ("openai", "OPENAI_API_KEY", "env"), ("openai", "work", "auth.json")]
    assert KEY not in listed.stdout and "sk-env-yyyy" not in listed.stdout
    assert all(r["status"] == "ok" for r in rows)

    table = hermes("auth", "list", "openai")
    assert "work" in table.stdout and KEY not in table.stdout

    assert hermes("auth", "reset").stdout.strip() == "cleared 0 cooldowns"
    removed = hermes("auth", "remove", "openai", "work")
    assert removed.returncode == 0 and "removed openai key 'work'" in removed.stdout
    assert KEY not in (hermes_home / "auth.json").read_text()


def test_user_mistakes_are_one_line_errors(hermes) -> None:
    unknown = hermes("auth", "add", "nosuch", "--key", KEY)
    assert unknown.returncode == 1
    assert unknown.stderr.strip().splitlines() == [
        "error: no 'hermes.model_providers' plugin named 'nosuch'; available: anthropic, openai "
        "(see `hermes plugin list --all`)"]
    empty = hermes("auth", "add", "openai", input="")
    assert empty.returncode == 1 and "no key given" in empty.stderr and "Traceback" not in empty.stderr
    missing = hermes("auth", "remove", "openai", "ghost")
    assert missing.returncode == 1 and "no stored openai key 'ghost'" in missing.stderr


def test_duplicate_key_and_label_with_clirunner(hermes_home: Path) -> None:
    app = build_app(PluginHost(load_plugins=""))
    runner = CliRunner()
    assert runner.invoke(app, ["auth", "add", "openai", "--key", KEY]).exit_code == 0
    again = runner.invoke(app, ["auth", "add", "openai", "--key", KEY])
    assert again.exit_code != 0 and KEY not in (again.output + str(again.exception))
    clash = runner.invoke(app, ["auth", "add", "openai", "--key", KEY + "x", "--label", "key-1"])
    assert clash.exit_code != 0
    assert "already has a key labelled 'key-1'" in str(clash.exception)
    assert runner.invoke(app, ["auth", "remove", "openai", "1"]).exit_code == 0
    assert json.loads((hermes_home / "auth.json").read_text())["credentials"]["openai"] == []


def test_list_shows_cooldowns_and_reset_clears_them(hermes_home: Path) -> None:
    from hermes.kernel import CredentialPool, ProviderError
    from hermes.kernel.home import HermesHome

    app = build_app(PluginHost(load_plugins=""))
    runner = CliRunner()
    assert runner.invoke(app, ["auth", "add", "anthropic", "--key", KEY]).exit_code == 0
    pool = CredentialPool("anthropic", home=HermesHome(hermes_home, "default"), environ={})
    pool.mark_exhausted(pool.credentials()[0], ProviderError("rate_limit", "slow", retry_after=600))
    rows = json.loads(runner.invoke(app, ["auth", "list", "anthropic", "--json"]).output)
    assert rows[0]["status"] == "cooling_down" and rows[0]["reason"] == "rate_limit"
    assert runner.invoke(app, ["auth", "reset", "anthropic"]).output.strip() == "cleared 1 cooldown"
    rows = json.loads(runner.invoke(app, ["auth", "list", "anthropic", "--json"]).output)
    assert rows[0]["status"] == "ok"
