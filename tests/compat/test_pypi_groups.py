"""Entry points of packages written for Hermes Agent become kernel drivers (compat/hermes/pypi_groups.py).

Each shape seen on PyPI (a provider class, an instance, ``register(ctx)``, a
module) in each group (``hermes_agent.memory_providers``, a Hermes-format class in
``hermes.memory_providers``, ``hermes_agent.model_providers``), through the real
entry-point discovery of the plugin host.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes.kernel import MemoryProvider, PluginHost, resolve_home
from hermes.kernel.errors import PluginLoadError
from tests.helpers import FakeDistributions

HERMES_CLASS = """
    import json
    from agent.memory_provider import MemoryProvider

    class Notes(MemoryProvider):
        def __init__(self):
            self.home = None

        @property
        def name(self):
            return "notes"

        def is_available(self):
            return True

        def initialize(self, session_id, **kwargs):
            self.home = kwargs["hermes_home"]

        def get_tool_schemas(self):
            return [{"name": "notes_find", "description": "find", "parameters": {"type": "object", "properties": {}}}]

        def handle_tool_call(self, tool_name, args, **kwargs):
            return json.dumps({"tool": tool_name, "home": self.home, "args": args})
"""


def _host() -> PluginHost:
    return PluginHost(load_plugins=None)


def _driven(host: PluginHost, name: str, hermes_home: Path) -> dict:
    cls = host.driver("hermes.memory_providers", name)
    assert isinstance(cls, type) and issubclass(cls, MemoryProvider)
    provider = cls()
    provider.initialize("s1", hermes_home=resolve_home())
    assert [t["name"] for t in provider.get_tool_schemas()] == ["notes_find"]
    return json.loads(provider.handle_tool_call("notes_find", {"q": "x"}))


@pytest.mark.parametrize(
    ("group", "value"),
    [("hermes.memory_providers", "notes_pkg:Notes"),  # a Hermes-format class in the kernel's own group
     ("hermes_agent.memory_providers", "notes_pkg:Notes"),
     ("hermes_agent.memory_providers", "notes_pkg:register"),  # register(ctx)
     ("hermes_agent.memory_providers", "notes_pkg")],  # a module holding register(ctx)
)  # fmt: skip
def test_a_hermes_format_provider_in_any_group_is_adapted(
    group: str, value: str, fake_dists: FakeDistributions, hermes_home: Path
) -> None:
    source = HERMES_CLASS + "\n    def register(ctx):\n        ctx.register_memory_provider(Notes())\n"
    fake_dists.add("hermes-notes", {group: {"notes": value}}, {"notes_pkg": source})
    host = _host()
    assert "notes" in host.available("hermes.memory_providers")
    result = _driven(host, "notes", hermes_home)
    # The provider's own code answered, with the profile's home as a path string.
    assert result == {"tool": "notes_find", "home": str(hermes_home), "args": {"q": "x"}}


def test_a_kernel_native_provider_passes_through_untouched(fake_dists: FakeDistributions) -> None:
    native = """
        from hermes.kernel import MemoryProvider

        class Native(MemoryProvider):
            name = "native"
    """
    fake_dists.add("native-mem", {"hermes_agent.memory_providers": {"native": "native_pkg:Native"}}, {"native_pkg": native})
    import native_pkg  # type: ignore[import-not-found]

    assert _host().driver("hermes.memory_providers", "native") is native_pkg.Native


def test_the_kernel_group_wins_a_name_both_declare(fake_dists: FakeDistributions) -> None:
    fake_dists.add("kernel-notes", {"hermes.memory_providers": {"notes": "notes_pkg:Notes"}}, {"notes_pkg": HERMES_CLASS})
    fake_dists.add("agent-notes", {"hermes_agent.memory_providers": {"notes": "notes_pkg:Notes"}})
    rows = [r for r in _host().installed("hermes.memory_providers") if r.name == "notes"]
    assert [r.distribution for r in rows] == ["kernel-notes"]


def test_register_that_registers_nothing_is_one_line(fake_dists: FakeDistributions, hermes_home: Path) -> None:
    fake_dists.add("empty-mem", {"hermes_agent.memory_providers": {"empty": "empty_pkg:register"}},
                   {"empty_pkg": "def register(ctx):\n    pass\n"})  # fmt: skip
    cls = _host().driver("hermes.memory_providers", "empty")
    with pytest.raises(PluginLoadError, match=r"register\(ctx\) did not call ctx.register_memory_provider"):
        cls()


PROFILE = """
    from providers import register_provider
    from providers.base import ProviderProfile

    acme = ProviderProfile(name="acme", api_mode="{mode}", env_vars=("ACME_API_KEY", "ACME_BASE_URL"),
                           base_url="https://api.acme.test/v1", fallback_models=("acme-large", "acme-small"),
                           signup_url="https://acme.test/")

    def register():
        register_provider(acme)
"""


def test_a_provider_profile_becomes_a_model_driver(fake_dists: FakeDistributions) -> None:
    fake_dists.add("acme-provider", {"hermes_agent.model_providers": {"acme": "acme_pkg:register"}},
                   {"acme_pkg": PROFILE.format(mode="chat_completions")})  # fmt: skip
    host = _host()
    cls = host.driver("hermes.model_providers", "acme")
    openai = host.driver("hermes.model_providers", "openai")
    assert issubclass(cls, openai) and cls is not openai
    assert (cls.env_key, cls.env_base_url, cls.default_model) == ("ACME_API_KEY", "ACME_BASE_URL", "acme-large")
    assert cls().base_url == "https://api.acme.test/v1"  # the profile's URL unless config or env names another
    assert cls(base_url="http://127.0.0.1:9/v1").base_url == "http://127.0.0.1:9/v1"
    assert cls.profile.extra == {"signup_url": "https://acme.test/"}
    import sys

    assert "providers" not in sys.modules  # the stand-in was there for the import only


def test_an_unsupported_wire_is_one_line(fake_dists: FakeDistributions) -> None:
    fake_dists.add("acme-provider", {"hermes_agent.model_providers": {"acme": "acme_pkg"}},
                   {"acme_pkg": PROFILE.format(mode="codex_responses")})  # fmt: skip
    with pytest.raises(PluginLoadError, match=r"api_mode 'codex_responses' of acme-provider is not supported"):
        _host().driver("hermes.model_providers", "acme")
