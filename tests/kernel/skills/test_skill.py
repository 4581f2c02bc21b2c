"""SKILL.md parsing and validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes.kernel.skills import SkillError, parse_skill_md
from tests.kernel.skills.conftest import skill_md


def test_parses_full_frontmatter() -> None:
    text = skill_md(
        "deploy.v2_x", "Deploy it.", version="1.2", platforms=["linux", "macos"],
        prerequisites={"env": ["DEPLOY_TOKEN"], "commands": ["git"]}, metadata={"tags": ["ops"]},
    )
    skill = parse_skill_md(text, Path("/x"))
    assert (skill.name, skill.description, skill.version) == ("deploy.v2_x", "Deploy it.", "1.2")
    assert skill.platforms == ("linux", "macos")
    assert skill.env == ("DEPLOY_TOKEN",) and skill.commands == ("git",) and skill.tags == ("ops",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no frontmatter\n", "must start with YAML frontmatter"),
        ("---\nname: [unclosed\n---\nbody\n", "not valid YAML"),
        ("---\n- a\n---\nbody\n", "must be a YAML mapping"),
        ("---\ndescription: d\n---\nbody\n", "needs a 'name'"),
        ("---\nname: Bad Name\ndescription: d\n---\nbody\n", "may hold only"),
        ("---\nname: " + "a" * 65 + "\ndescription: d\n---\nbody\n", "longer than 64"),
        ("---\nname: ok\n---\nbody\n", "non-empty 'description'"),
        ("---\nname: ok\ndescription: " + "d" * 1025 + "\n---\nbody\n", "longer than 1024"),
        ("---\nname: ok\ndescription: d\n---\n   \n", "needs a body"),
        ("---\nname: ok\ndescription: d\nplatforms: 3\n---\nbody\n", "platforms must be"),
        ("---\nname: ok\ndescription: d\nprerequisites: [x]\n---\nbody\n", "prerequisites must be"),
    ],
)
def test_invalid_skill_md(text: str, message: str) -> None:
    with pytest.raises(SkillError, match=message):
        parse_skill_md(text, Path("/x"))


def test_skill_md_size_limit() -> None:
    text = skill_md("big", body="x" * 100_001)
    with pytest.raises(SkillError, match="100,000"):
        parse_skill_md(text, Path("/x"))


def test_name_rejects_dot_dot() -> None:
    with pytest.raises(SkillError):
        parse_skill_md(skill_md("a..b"), Path("/x"))
