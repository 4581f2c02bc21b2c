"""Scopes, tenant homes and tenant keys: the rules the serve routes rely on."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes.kernel.errors import ConfigError, HermesError
from hermes.kernel.home import HermesHome
from hermes.plugins.serve.keys import add_key, load_keys
from hermes.plugins.serve.tenants import Scope, TenantHome
from hermes.kernel.skills.library import SkillsLibrary
from hermes.kernel.skills.manage import SkillManager


def _skill(folder: Path, name: str) -> None:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name} things\n---\nsteps\n")


def test_a_key_is_its_own_tenant_unless_it_names_one_and_admin_reads_everything(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    add_key(config, "alice")
    add_key(config, "alice-ci", tenant="alice", requests_per_minute=5)
    add_key(config, "ops", admin=True)
    from hermes.kernel.config import read_config_file

    keys = {k.name: k for k in load_keys(read_config_file(config)["serve"]["api_keys"])}
    assert keys["alice"].tenant is None and keys["alice"].tenant_name == "alice"
    assert keys["alice-ci"].tenant_name == "alice" and keys["alice-ci"].requests_per_minute == 5
    assert Scope.of(keys["alice"]) == Scope.of(keys["alice-ci"]) == Scope("alice", False)
    ops = Scope.of(keys["ops"])
    assert ops.admin and not ops.isolated and ops.reads is None
    assert Scope.of(None) == Scope() and Scope().reads is None and Scope().writes is None
    assert ops.writes is None and Scope("alice").writes == "alice"
    alice = Scope("alice")
    assert alice.reads == "alice"
    assert alice.sees({"tenant": "alice"}) and not alice.sees({"tenant": "bob"})
    assert not alice.sees({"tenant": None}) and not alice.sees(None)  # rows from before tenants: operator only
    assert ops.sees({"tenant": "bob"}) and ops.sees({"tenant": None}) and not ops.sees(None)


@pytest.mark.parametrize("tenant", ["../x", "..", ".", "a/b", "", "x" * 65, "tab\there"])
def test_a_tenant_name_that_is_not_a_folder_name_is_refused(tmp_path: Path, tenant: str) -> None:
    with pytest.raises(HermesError, match="invalid tenant name"):
        add_key(tmp_path / "config.yaml", "k", tenant=tenant)
    entry = {"name": "k", "sha256": "0" * 64, "tenant": tenant}
    with pytest.raises(ConfigError, match=r"serve\.api_keys\[0\]\.tenant"):
        load_keys([entry])


def test_admin_must_be_a_boolean() -> None:
    with pytest.raises(ConfigError, match=r"serve\.api_keys\[0\]\.admin must be true or false"):
        load_keys([{"name": "k", "sha256": "0" * 64, "admin": "yes"}])


def test_a_tenant_home_keeps_the_profiles_config_and_its_own_memory_skills_and_results(tmp_path: Path) -> None:
    profile = HermesHome(tmp_path, "default")
    home = Scope("bob").home(profile)
    assert isinstance(home, TenantHome)
    assert home.config_path == profile.config_path and home.env_path == profile.env_path
    assert home.auth_path == profile.auth_path and home.state_db == profile.state_db and home.path == profile.path
    assert home.memories_dir == tmp_path / "tenants" / "bob" / "memories"
    assert home.skills_dir == tmp_path / "tenants" / "bob" / "skills"
    assert home.results_dir == tmp_path / "tenants" / "bob" / "results"
    home.ensure()
    assert (tmp_path / "tenants" / "bob").stat().st_mode & 0o077 == 0
    assert Scope("bob", admin=True).home(profile) is profile and Scope().home(profile) is profile
    assert Scope("bob").workspace(tmp_path / "ws") == tmp_path / "ws" / "bob"
    assert Scope("bob", admin=True).workspace(tmp_path / "ws") == tmp_path / "ws"


def test_a_tenant_sees_the_profiles_skills_read_only_and_writes_its_own(tmp_path: Path) -> None:
    profile = HermesHome(tmp_path, "default")
    _skill(profile.skills_dir / "deploy", "deploy")
    bob = Scope("bob").home(profile)
    library = SkillsLibrary.discover(bob)
    assert library.get("deploy") is not None and library.get("deploy").source == "external"
    manager = SkillManager(bob)
    from hermes.kernel.skills.skill import SkillError

    with pytest.raises(SkillError, match="read-only"):
        manager.delete("deploy")
    _skill(bob.skills_dir / "mine", "mine")
    assert SkillsLibrary.discover(bob).get("mine").source == "user"
    assert SkillsLibrary.discover(profile).get("mine") is None  # the operator's library never shows a tenant's
    assert SkillsLibrary.discover(Scope("alice").home(profile)).get("mine") is None
