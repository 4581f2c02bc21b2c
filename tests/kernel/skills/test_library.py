"""Discovery, shadowing, invalid skills, filtering and the system-prompt index."""

from __future__ import annotations

import os
from pathlib import Path

from hermes.kernel import Config, HermesHome
from hermes.kernel.skills import SkillsLibrary, skills_index
from hermes.kernel.skills.index import SKILLS_GUIDANCE
from hermes.kernel.skills.skill import current_platform
from tests.kernel.skills.conftest import write_skill

BUNDLED = {"hermes-plugin-authoring", "context-engine-authoring", "pytest-debugging", "git-commit-workflow", "python-profiling"}


def test_bundled_pack_loads_through_entry_point(home: HermesHome, config: Config, host) -> None:
    library = SkillsLibrary.discover(home, config, host)
    assert BUNDLED <= set(library.skills)
    assert all(library.skills[n].source == "bundled" for n in BUNDLED)
    assert library.skills["git-commit-workflow"].category == "software-development"
    assert library.invalid == []


def test_user_skill_shadows_bundled(home: HermesHome, config: Config, host) -> None:
    write_skill(home.skills_dir, "pytest-debugging", description="My own way.")
    library = SkillsLibrary.discover(home, config, host)
    assert library.get("pytest-debugging").source == "user"
    assert library.get("pytest-debugging").description == "My own way."
    assert [s.source for s in library.shadowed if s.name == "pytest-debugging"] == ["bundled"]


def test_external_dirs_between_user_and_bundled(home: HermesHome, tmp_path: Path, host) -> None:
    ext = tmp_path / "ext"
    write_skill(ext, "team-skill", category="team")
    write_skill(ext, "python-profiling", description="Team profiling.")
    write_skill(home.skills_dir, "team-skill", description="Mine.")
    config = Config({"skills": {"external_dirs": [str(ext)]}})
    library = SkillsLibrary.discover(home, config, host)
    assert library.get("team-skill").source == "user"
    assert library.get("python-profiling").source == "external"


def test_invalid_skill_is_reported_and_skipped(home: HermesHome, config: Config, host) -> None:
    write_skill(home.skills_dir, "broken", text="no frontmatter at all\n")
    write_skill(home.skills_dir, "fine")
    library = SkillsLibrary.discover(home, config, host)
    assert "fine" in library.skills
    assert [(i.path.name, "frontmatter" in i.reason) for i in library.invalid] == [("broken", True)]


def test_vcs_venv_and_hidden_folders_are_never_scanned(home: HermesHome, host) -> None:
    root = home.skills_dir
    for hidden in (".git", "venv", ".venv", "node_modules", ".hub", "__pycache__"):
        write_skill(root / hidden, f"in-{hidden.strip('.').replace('_', '')}")
    env = root / "myenv"
    env.mkdir(parents=True)
    (env / "pyvenv.cfg").write_text("home = /usr\n")
    write_skill(env, "in-env")
    write_skill(root, "visible")
    library = SkillsLibrary.discover(home, Config({}), host)
    user = {s.name for s in library.all() if s.source == "user"}
    assert user == {"visible"}


def test_support_folders_are_not_searched_for_skills(home: HermesHome, host) -> None:
    folder = write_skill(home.skills_dir, "outer")
    write_skill(folder / "references", "inner")
    library = SkillsLibrary.discover(home, Config({}), host)
    assert "inner" not in library.skills


def test_platform_prerequisites_and_disabled_filter_the_index(home: HermesHome, host, monkeypatch) -> None:
    monkeypatch.delenv("SKILLTEST_TOKEN", raising=False)
    other = "windows" if current_platform() != "windows" else "linux"
    write_skill(home.skills_dir, "other-os", platforms=[other])
    write_skill(home.skills_dir, "needs-env", prerequisites={"env": ["SKILLTEST_TOKEN"]})
    write_skill(home.skills_dir, "needs-cmd", prerequisites={"commands": ["no-such-command-xyz"]})
    write_skill(home.skills_dir, "switched-off")
    write_skill(home.skills_dir, "usable", platforms=[current_platform()])
    config = Config({"skills": {"disabled": ["switched-off"]}})
    text = skills_index(home, config, host)
    assert "- usable: Does a useful thing." in text
    for name in ("other-os", "needs-env", "needs-cmd", "switched-off"):
        assert name not in text
    monkeypatch.setenv("SKILLTEST_TOKEN", "x")
    assert "needs-env" in skills_index(home, config, host)


def test_index_format_is_deterministic(home: HermesHome, config: Config, host) -> None:
    write_skill(home.skills_dir, "deploy", category="devops", description="Ship  the\n app.")
    text = skills_index(home, config, host)
    assert text.startswith(SKILLS_GUIDANCE)
    assert "skill_view" in text and 'skill_manage(action="create")' in text and "patch" in text
    assert "devops:\n  - deploy: Ship the app." in text
    assert text == skills_index(home, config, host)


def test_index_is_empty_without_skills(home: HermesHome) -> None:
    class NoPacks:
        def extensions(self, group):  # noqa: ANN001, ANN202
            return []

    assert skills_index(home, Config({}), NoPacks()) == ""


def test_third_party_pack_through_entry_point(home: HermesHome, fake_dists, monkeypatch) -> None:
    fake_dists.add("acme-skills", {"hermes.skills": {"acme": "acme_skills"}}, {"acme_skills.__init__": ""})
    write_skill(fake_dists.root / "acme_skills", "acme-deploy")
    from hermes.kernel import PluginHost

    library = SkillsLibrary.discover(home, Config({}), PluginHost(load_plugins="acme-skills"))
    assert library.get("acme-deploy").source == "bundled:acme"


def test_discovery_is_fast(home: HermesHome, host) -> None:
    import time

    for i in range(100):
        write_skill(home.skills_dir, f"skill-{i:03d}", category=f"cat{i % 5}")
    start = time.perf_counter()
    library = SkillsLibrary.discover(home, Config({}), host)
    assert len([s for s in library.all() if s.source == "user"]) == 100
    assert time.perf_counter() - start < 2.0
    assert os.path.isdir(home.skills_dir)
