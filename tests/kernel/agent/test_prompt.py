"""The system prompt: layers in order, deterministic, SOUL.md honoured."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from hermes.kernel.prompt import DEFAULT_IDENTITY, PromptContext, build_system_prompt

NOW = datetime(2026, 11, 30, tzinfo=timezone.utc)


def test_layers_in_order(tmp_path: Path) -> None:
    ctx = PromptContext(
        session_id="20261130_000000_abcdef",
        model="m1",
        provider="openai",
        tool_names=("terminal", "unknown_tool", "read_file"),
        system_message="Answer in French.",
        memory_block="<memory>likes tea</memory>",
        cwd=tmp_path,
        now=NOW,
    )
    prompt = build_system_prompt(ctx)
    order = [DEFAULT_IDENTITY[:20], "Run commands with terminal", "Read files with read_file", "Answer in French.", "likes tea", "- date: 2026-11-30"]
    positions = [prompt.index(piece) for piece in order]
    assert positions == sorted(positions)
    assert "unknown_tool" not in prompt
    assert f"working directory: {tmp_path}" in prompt and "session: 20261130_000000_abcdef" in prompt
    assert build_system_prompt(ctx) == prompt  # byte-identical for the same context


def test_soul_md_replaces_the_identity(tmp_path: Path) -> None:
    soul = tmp_path / "SOUL.md"
    soul.write_text("You are Marvin.\n")
    prompt = build_system_prompt(PromptContext("s", "m", "p", soul_path=soul, now=NOW))
    assert prompt.startswith("You are Marvin.") and DEFAULT_IDENTITY not in prompt
    soul.write_text("   \n")
    assert build_system_prompt(PromptContext("s", "m", "p", soul_path=soul, now=NOW)).startswith(DEFAULT_IDENTITY)
    missing = build_system_prompt(PromptContext("s", "m", "p", soul_path=tmp_path / "none.md", now=NOW))
    assert missing.startswith(DEFAULT_IDENTITY) and "## Using your tools" not in missing
