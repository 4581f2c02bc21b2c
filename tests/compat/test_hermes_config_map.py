"""Hermes Agent's config.yaml keys read by the kernel: mapping, unused keys, precedence, in-place edits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hermes.compat.hermes.config_edit import set_in_text
from hermes.compat.hermes.config_map import MAPPED, UNUSED, hermes_reason, kernel_key_for, render_markdown, translate
from hermes.kernel.config import is_foreign, load_config, set_config_value
from hermes.kernel.config_schema import ConfigSchema
from hermes.kernel.errors import ConfigError
from hermes.kernel.home import HermesHome

SCHEMA = ConfigSchema.build()


@pytest.fixture
def home(hermes_home: Path) -> HermesHome:
    home = HermesHome(root=hermes_home, profile="default")
    home.ensure()
    return home


def write(home: HermesHome, text: str) -> None:
    home.config_path.write_text(text)


def test_renamed_hermes_keys_set_their_kernel_keys(home: HermesHome) -> None:
    write(home, "model:\n  default: my-model\n  provider: anthropic\nagent:\n  max_turns: 7\n"
                "memory:\n  memory_char_limit: 3000\n  user_char_limit: 900\n  memory_enabled: false\n"
                "compression:\n  protect_last_n: 9\nskills:\n  creation_nudge_interval: 4\n")  # fmt: skip
    config = load_config(home, environ={})
    assert config.get("model.name") == "my-model"
    assert config.get("agent.max_iterations") == 7
    assert (config.get("memory.memory_limit"), config.get("memory.user_limit")) == (3000, 900)
    assert config.get("memory.enabled") is False
    assert config.get("compression.tail_min_messages") == 9
    assert config.get("skills.review_interval") == 4
    assert config.origin("agent.max_iterations") == "config.yaml via the Hermes Agent key agent.max_turns"
    assert config.origin("model.provider") == "config.yaml"
    assert config.origin("model.max_tokens") == "default"


def test_the_kernels_own_key_wins_over_the_hermes_key(home: HermesHome) -> None:
    write(home, "model:\n  default: hermes-model\n  name: kernel-model\nagent:\n  max_turns: 7\n  max_iterations: 30\n")
    config = load_config(home, environ={})
    assert config.get("model.name") == "kernel-model"
    assert config.get("agent.max_iterations") == 30
    assert config.origin("model.name") == "config.yaml"
    assert config.hermes is not None
    assert config.hermes.shadowed == {"model.default": "model.name", "agent.max_turns": "agent.max_iterations"}


def test_hermes_values_of_shared_keys_are_translated(home: HermesHome) -> None:
    write(home, "model:\n  provider: custom\n  base_url: http://localhost:1/v1\ntoolsets: [hermes-cli]\n"
                "approvals:\n  mode: smart\nauxiliary:\n  compression:\n    provider: auto\n"
                "plugins:\n  enabled: [disk-cleanup]\n  disabled: [x]\n")  # fmt: skip
    config = load_config(home, environ={})
    assert config.get("model.provider") == "openai"
    assert config.get("toolsets") == ["files", "terminal", "todo", "clarify", "session_search", "skills", "delegation", "memory"]
    assert config.get("approvals.mode") == "ask"
    assert config.get("auxiliary.compression.provider") == ""
    assert config.disabled_plugins == ["x"]
    assert config.hermes is not None and "plugins.enabled" in config.hermes.unused
    assert "enabled" not in config.get("plugins")


def test_toolset_names_with_no_kernel_counterpart_are_dropped_and_kernel_names_kept(home: HermesHome) -> None:
    write(home, "platform_toolsets:\n  cli: [web, file, terminal, browser]\n  telegram: [hermes-telegram]\n")
    config = load_config(home, environ={})
    assert config.get("toolsets") == ["files", "terminal"]
    assert config.origin("toolsets") == "config.yaml via the Hermes Agent key platform_toolsets.cli"
    assert config.hermes is not None and "platform_toolsets.telegram" in config.hermes.unused


@pytest.mark.parametrize(
    ("environ", "base_url", "provider", "kept_url"),
    [
        ({"ANTHROPIC_API_KEY": "sk-ant-1"}, "http://h/v1", "anthropic", None),  # the base URL is not Anthropic's
        ({"OPENAI_API_KEY": "sk-1"}, "http://h/v1", "openai", "http://h/v1"),
        ({"OPENAI_API_KEY": "sk-1", "ANTHROPIC_API_KEY": "sk-ant-1"}, "", "openai", None),  # OpenAI first
        ({}, "http://localhost:11434/v1", "openai", "http://localhost:11434/v1"),
    ],
)
def test_provider_auto_is_resolved_as_hermes_agent_does(
    home: HermesHome, environ: dict[str, str], base_url: str, provider: str, kept_url: str | None
) -> None:
    write(home, f"model:\n  default: m\n  provider: auto\n  base_url: '{base_url}'\n")
    config = load_config(home, environ=environ)
    assert config.get("model.provider") == provider
    assert config.get("model.base_url") == kept_url
    assert config.origin("model.provider").startswith("config.yaml via the Hermes Agent key model.provider (auto: ")


def test_provider_auto_with_nothing_found_fails_only_where_the_provider_is_needed(home: HermesHome) -> None:
    write(home, "model:\n  provider: auto\n")
    config = load_config(home, environ={})
    assert config.get("model.provider", "") == ""  # optional readers carry on
    with pytest.raises(ConfigError, match=r"model.provider is auto .*\(`hermes config set model.provider anthropic`\)$"):
        config.get("model.provider")


def test_provider_auto_set_again_by_the_environment_is_not_an_error(home: HermesHome) -> None:
    write(home, "model:\n  provider: auto\n")
    config = load_config(home, environ={"HERMES_MODEL__PROVIDER": "anthropic"})
    assert config.get("model.provider") == "anthropic"
    assert config.origin("model.provider") == "environment (HERMES_MODEL__PROVIDER)"


def test_a_bad_hermes_value_is_one_line_and_the_kernel_default_stays(home: HermesHome) -> None:
    write(home, "agent:\n  max_turns: lots\nmemory:\n  memory_char_limit: 3000\n")
    config = load_config(home, environ={})
    assert config.get("agent.max_iterations") == 90
    assert config.get("memory.memory_limit") == 3000  # the rest still applies
    assert config.hermes is not None
    [line] = config.hermes.problems
    assert "Hermes Agent key agent.max_turns: 'lots' is not allowed" in line and "agent.max_iterations" in line


def test_a_bad_value_of_the_kernels_own_key_still_refuses_the_file(home: HermesHome) -> None:
    write(home, "display:\n  skin: mono\nagent:\n  max_iterations: lots\n")
    with pytest.raises(ConfigError, match="agent.max_iterations: 'lots' is not allowed"):
        load_config(home, environ={})


def test_reading_a_hermes_file_never_writes(home: HermesHome) -> None:
    text = "# mine\nmodel:\n  default: m  # keep\n_config_version: 33\ntoolsets: a,b\n"
    write(home, text)
    load_config(home, environ={})
    assert home.config_path.read_text() == text
    assert list(home.config_path.parent.glob("config.yaml.*.bak")) == []


def test_a_pure_kernel_file_is_not_foreign_and_a_hermes_one_is() -> None:
    assert not is_foreign({"model": {"provider": "openai", "name": "x"}, "agent": {"max_iterations": 3}}, SCHEMA)
    assert is_foreign({"model": "gpt-4"}, SCHEMA)
    assert is_foreign({"model": {"provider": "auto"}}, SCHEMA)
    assert is_foreign({"plugins": {"enabled": ["a"]}}, SCHEMA)
    assert is_foreign({"display": {"skin": "mono"}}, SCHEMA)


def test_a_pure_kernel_config_never_imports_the_translation(home: HermesHome) -> None:
    write(home, "model:\n  provider: openai\n  name: x\n")
    probe = ("import json, sys; from hermes.kernel.config import load_config; from hermes.kernel.home import HermesHome; from pathlib import Path;"
             f"load_config(HermesHome(root=Path({str(home.root)!r}), profile='default'), environ={{}});"
             "print(json.dumps([m for m in sys.modules if m.startswith('hermes.compat')]))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(out.stdout) == []


def test_unknown_keys_that_are_not_hermes_keys_stay_possible_typos() -> None:
    result = translate({"agent": {"max_iteratons": 3, "gateway_timeout": 5}}, SCHEMA)
    assert result.unused == {"agent.gateway_timeout": UNUSED["agent.gateway_timeout"]}
    assert SCHEMA.unknown(result.data) == ["agent.max_iteratons"]


def test_mcp_servers_become_kernel_servers() -> None:
    result = translate({"mcp_servers": {"time": {"command": "uvx", "args": ["t"], "lazy": True}}}, SCHEMA)
    assert result.data["mcp"]["servers"]["time"] == {"command": "uvx", "args": ["t"]}
    assert "mcp_servers.time.lazy" in result.unused
    assert kernel_key_for("mcp_servers.time.command") == "mcp.servers.time.command"


def test_every_table_entry_is_documented_and_names_real_kernel_keys() -> None:
    table = render_markdown()
    for rule in MAPPED:
        assert f"`{rule.hermes}`" in table
        assert rule.kernel == "credentials.*" or SCHEMA.find(rule.kernel) is not None, rule.kernel
    assert all(hermes_reason(key) == reason for key, reason in UNUSED.items())
    doc = (Path(__file__).resolve().parents[2] / "docs" / "hermes-agent-config.md").read_text()
    assert table in doc  # the docs table is generated from this module


def test_set_in_text_changes_only_that_key() -> None:
    text = "# top\nmodel:\n  default: a   # my model\n  provider: auto\n\n# agent\nagent:\n  max_turns: 5\nlst:\n- a\n"
    changed = set_in_text(text, "model.default", "b")
    assert changed == text.replace("default: a   # my model", "default: b   # my model")
    added = set_in_text(text, "model.name", "k")
    assert added == text.replace("  provider: auto\n", "  provider: auto\n  name: k\n")
    nested = set_in_text(text, "store.backend", "sqlite")
    assert nested == text + "store:\n  backend: sqlite\n"
    assert yaml.safe_load(set_in_text(text, "lst", ["x", "y"]))["lst"] == ["x", "y"]


def test_set_in_text_refuses_a_layout_it_cannot_edit_in_place() -> None:
    with pytest.raises(ConfigError, match="edit config.yaml by hand|edit the file by hand"):
        set_in_text("model: {default: a}\n", "model.name", "b")


def test_set_config_value_on_a_hermes_file_keeps_every_other_byte(home: HermesHome) -> None:
    text = "# written by Hermes Agent\nmodel:\n  default: m\n  provider: auto\ndisplay:\n  skin: mono  # theme\n"
    write(home, text)
    home.config_path.chmod(0o644)
    set_config_value(home.config_path, "agent.max_iterations", 12)
    assert home.config_path.read_text() == text + "agent:\n  max_iterations: 12\n"
    assert home.config_path.stat().st_mode & 0o777 == 0o644  # Hermes Agent's file mode stays


# Keys of Hermes Agent's cli-config.yaml.example (set or shown commented out) that DEFAULT_CONFIG lacks.
EXAMPLE_KEYS = (
    "database.journal_mode", "database.synchronous", "runtime.nofile_soft_limit", "attachments.storage",
    "plugins.clone_timeout_seconds", "model.default", "model.provider", "model.base_url", "model.api_key",
    "model.streaming", "model.context_length", "model.ollama_num_ctx", "model.default_headers", "model.auth_mode",
    "providers.my-proxy.base_url", "timeouts.tools.concurrent_batch", "provider_routing.sort", "openrouter.response_cache",
    "worktree", "worktree_sync", "kanban.review_dispatch", "cron.catch_up_missed", "terminal.lifetime_seconds",
    "security.approval.transport", "security.protected_instruction_files", "lsp.trusted_workspaces",
    "browser.inactivity_timeout", "tool_loop_guardrails.warn_after.exact_failure", "compression.checkpoint_required",
    "compression.progress_notices", "compression.model_thresholds", "compression.max_attempts",
    "compression.idle_compact_after_seconds", "compression.proactive_prune_tokens", "tool_budget.mcp_result_size_chars",
    "prompt_caching.cache_ttl", "auxiliary.vision.provider", "auxiliary.title_generation.max_concurrency",
    "auxiliary.compression.no_progress_timeout", "auxiliary.background_review.enabled", "memory.nudge_interval",
    "max_concurrent_sessions", "group_sessions_per_user", "sessions.min_vacuum_interval_days", "gateway.room_link_url",
    "dashboard.startup_orphan_sweep", "streaming.enabled", "skills.creation_nudge_interval", "agent.max_turns",
    "agent.verbose", "agent.reasoning_effort", "agent.fast_auto_seconds", "agent.personalities", "agent.build_wait_timeout",
    "platform_toolsets.cli", "platform_toolsets.telegram", "platforms.telegram.reply_to_mode", "discord.require_mention",
    "mcp_servers.time.command", "mcp_servers.time.args", "mcp_servers.github.env", "mcp_servers.notion.url",
    "mcp_servers.analysis.sampling", "tts.provider", "stt.enabled", "stt.local.model", "wake_word.enabled",
    "image_gen.provider", "human_delay.mode", "code_execution.timeout", "delegation.max_iterations",
    "delegation.fallback_providers", "honcho", "display.compact", "display.skin", "model_aliases.opus.model",
    "privacy.redact_pii", "hooks.pre_tool_call", "hooks_auto_accept", "telemetry.shared_metrics.enabled",
    "auth.adopt_external_logins", "updates.check", "secrets.bitwarden.enabled", "_config_version",
)  # fmt: skip


@pytest.mark.parametrize("key", EXAMPLE_KEYS)
def test_every_key_of_hermes_agents_example_config_is_mapped_or_listed(key: str) -> None:
    from hermes.compat.hermes.config_map import is_hermes_key

    assert is_hermes_key(key) or SCHEMA.find(key) is not None, key


def test_help_with_a_hermes_config_imports_nothing_heavy(home: HermesHome) -> None:
    write(home, "model:\n  default: m\n  provider: auto\ndisplay:\n  skin: mono\nplugins:\n  enabled: [a]\n")
    heavy = ("openai", "anthropic", "sqlite_utils", "stevedore", "rich", "starlette", "uvicorn", "mcp", "psycopg")
    probe = ("import json, sys\nfrom hermes.kernel.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n"
             f"    pass\nprint(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert "Usage: hermes" in out.stdout, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_SEGMENT = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)
_VALUE = st.one_of(st.integers(-10**6, 10**6), st.booleans(), st.none(), st.floats(allow_nan=False, allow_infinity=False),
                   st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=20),
                   st.lists(st.integers(), max_size=3))  # fmt: skip
_HERMES_TEXT = "# Hermes Agent\nmodel:\n  default: m  # note\n  provider: auto\n\n# tail\n_config_version: 33\n"


@settings(max_examples=300, deadline=None)
@given(assignments=st.lists(st.tuples(st.lists(_SEGMENT, min_size=1, max_size=3), _VALUE), min_size=1, max_size=5))
def test_set_in_text_sets_exactly_what_was_asked(assignments: list[tuple[list[str], object]]) -> None:
    text = _HERMES_TEXT
    for parts, value in assignments:
        key = ".".join(parts)
        try:
            changed = set_in_text(text, key, value)
        except ConfigError:
            continue  # refused: nothing changes (the file is left as it was)
        data = yaml.safe_load(changed)
        node = data
        for part in parts:
            node = node[part]
        assert node == value
        if parts[0] not in ("model", "_config_version"):
            assert changed.startswith(_HERMES_TEXT.split("\n# tail")[0])  # Hermes Agent's lines stay as they were
        text = changed
