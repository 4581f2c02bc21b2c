"""Hermes Agent's hook names reach the kernel's hooks, translated, through a plugin host in process."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from hermes.compat.hermes import general_plugins
from hermes.compat.hermes.hook_map import HERMES_HOOKS, KERNEL_HOOK, UNSUPPORTED
from hermes.kernel import PluginHost, Veto
from hermes.kernel import hookspecs
from tests.hermes_agent import LATEST, release_path


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(general_plugins, "_LOADED", {})


def _host(tmp_path: Path, plugins: dict[str, str]) -> PluginHost:
    for name, init in plugins.items():
        folder = tmp_path / "plugins" / name
        folder.mkdir(parents=True)
        (folder / "plugin.yaml").write_text(f"name: {name}\n", encoding="utf-8")
        (folder / "__init__.py").write_text(textwrap.dedent(init), encoding="utf-8")
    host = PluginHost(load_plugins=",".join(plugins), plugin_dirs=[tmp_path / "plugins"])
    host.load_plugins()
    return host


def test_every_hermes_hook_is_mapped_or_said_to_be_unsupported() -> None:
    assert len(HERMES_HOOKS) == 23 and not set(KERNEL_HOOK) & set(UNSUPPORTED)
    kernel = {name for name in dir(hookspecs) if hasattr(getattr(hookspecs, name), "hermes_spec")}
    assert set(KERNEL_HOOK.values()) <= kernel


def test_hermes_callbacks_get_hermes_arguments_and_their_answers_become_the_kernels(tmp_path: Path) -> None:
    host = _host(tmp_path, {"policy": '''
        seen = []
        def pre(tool_name, args, session_id, tool_call_id, **kw):
            seen.append(("pre", tool_name, args, session_id, tool_call_id))
            if tool_name == "terminal":
                return {"action": "block", "message": "no shell here"}
        def transform(tool_name, result, **kw):
            return result.upper()
        def llm(user_message, is_first_turn, **kw):
            seen.append(("llm", user_message, is_first_turn))
            return {"context": "remember the milk"}
        def out(response_text, **kw):
            return response_text + "!"
        def register(ctx):
            ctx.register_hook("pre_tool_call", pre)
            ctx.register_hook("transform_tool_result", transform)
            ctx.register_hook("pre_llm_call", llm)
            ctx.register_hook("transform_llm_output", out)
        '''})  # fmt: skip
    assert not host.load_failures
    blocked = host.call("before_tool_call", session_id="s1", tool_name="terminal", arguments={"command": "ls"}, call_id="c1")
    assert blocked == [Veto("no shell here")]
    assert host.call("before_tool_call", session_id="s1", tool_name="read_file", arguments={}, call_id="c2") == []
    assert host.call("transform_tool_result", session_id="s1", tool_name="read_file", arguments={}, result="ok") == ["OK"]
    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "buy what?"}]
    assert host.call("before_model_call", session_id="s1", model="m", messages=messages, tools=[]) == ["remember the milk"]
    assert host.call("transform_model_output", session_id="s1", model="m", text="done") == ["done!"]
    import hermes_plugins.policy as module  # the folder imports under Hermes Agent's own namespace

    assert module.seen == [("pre", "terminal", {"command": "ls"}, "s1", "c1"), ("pre", "read_file", {}, "s1", "c2"),
                           ("llm", "buy what?", True)]  # fmt: skip
    # Only the hooks a plugin asked for have a listener: the rest stay free.
    assert host.pm.hook.after_tool_call.get_hookimpls() == []


def test_a_raising_callback_is_recorded_under_its_plugin_and_a_veto_hook_fails_closed(tmp_path: Path) -> None:
    host = _host(tmp_path, {"crashy": '''
        calls = []
        def boom(**kw):
            raise ValueError("guard crashed")
        def after(**kw):
            calls.append("after")
        def register(ctx):
            ctx.register_hook("post_tool_call", boom)
            ctx.register_hook("post_tool_call", after)
        '''})  # fmt: skip
    host.call("after_tool_call", session_id="s", tool_name="t", arguments={}, call_id="c", result="r", error=None,
              duration_s=0.1)  # fmt: skip
    import hermes_plugins.crashy as module

    assert module.calls == ["after"]  # the plugin's other callback still ran
    (failure,) = host.hook_failures
    assert (failure.hook, failure.plugin, failure.error) == ("after_tool_call", "crashy", "ValueError: guard crashed")


def test_the_bundled_security_guidance_plugin_warns_through_transform_tool_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(release_path(LATEST) / "plugins" / "security-guidance", tmp_path / "plugins" / "security-guidance")
    host = PluginHost(load_plugins="security-guidance", plugin_dirs=[tmp_path / "plugins"])
    host.load_plugins()
    assert not host.load_failures
    args = {"path": "app.py", "content": "import pickle\ndata = pickle.load(open('x', 'rb'))\n"}
    (warned,) = host.call("transform_tool_result", session_id="s", tool_name="write_file", arguments=args,
                          result='{"ok": true}')  # fmt: skip
    assert warned.startswith('{"ok": true}') and "pickle" in warned.lower()
    assert host.call("transform_tool_result", session_id="s", tool_name="write_file",
                     arguments={"path": "a.py", "content": "x = 1\n"}, result="{}") == []  # fmt: skip
    monkeypatch.setenv("SECURITY_GUIDANCE_BLOCK", "1")  # its block mode vetoes the write instead
    (veto,) = host.call("before_tool_call", session_id="s", tool_name="write_file", arguments=args, call_id="c")
    assert isinstance(veto, Veto) and "security-guidance refused this write" in veto.reason


def test_parts_the_kernel_does_not_take_are_one_line_each_and_the_rest_still_loads(tmp_path: Path) -> None:
    skill = tmp_path / "skill" / "SKILL.md"
    skill.parent.mkdir()
    skill.write_text("---\nname: tidy\ndescription: tidy up\n---\nTidy.\n", encoding="utf-8")
    host = _host(tmp_path, {"mixed": f'''
        from pathlib import Path
        def register(ctx):
            ctx.register_skill("tidy", Path({str(skill)!r}))
            ctx.register_context_engine(object())
            ctx.register_image_gen_provider(object())
            ctx.register_hook("on_session_end", lambda **kw: None)
        '''})  # fmt: skip
    notes = host.load_failures[("hermes.plugins", "mixed")].split("; ")
    starts = ("skill 'tidy' kept but not offered", "its context engine is not used",
              "ctx.register_image_gen_provider ignored: hermes-kernel has no image generation")
    assert len(notes) == 3 and all(n.startswith(s) for n, s in zip(notes, starts)), notes
    assert len(host.pm.hook.on_session_end.get_hookimpls()) == 1  # its hook still listens


def test_register_tools_and_hook_callbacks_import_the_host_modules_for_the_active_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plugins import ``hermes_constants`` inside their code, as Hermes Agent's own do; outside a
    call the stand-in is gone again, so it never shadows anything for the rest of the process."""
    import sys

    from hermes.kernel import HermesHome, ToolContext

    home = HermesHome(tmp_path / "root", "work")
    home.path.mkdir(parents=True)
    monkeypatch.setattr("hermes.kernel.home._active", home)  # what the CLI records; undone after the test
    host = _host(tmp_path, {"homey": '''
        seen = []
        def where(**kw):
            from hermes_constants import get_hermes_home
            seen.append(str(get_hermes_home()))
        def tool(args, **kw):
            from hermes_constants import get_hermes_home
            return str(get_hermes_home())
        def register(ctx):
            from hermes_constants import get_hermes_home
            seen.append(str(get_hermes_home()))
            ctx.register_hook("post_tool_call", where)
            ctx.register_tool("where_am_i", "homey", {"name": "where_am_i", "description": "d"}, tool)
        '''})  # fmt: skip
    assert not host.load_failures, host.load_failures
    host.call("after_tool_call", session_id="s", tool_name="x", arguments={}, call_id="c", result="r", error=None,
              duration_s=0.1)  # fmt: skip
    [tool] = general_plugins.plugin_tools()
    assert tool.handler({}, ToolContext(home=home)) == str(home.path)
    import hermes_plugins.homey as module

    assert module.seen == [str(home.path), str(home.path)]  # at register(ctx), then in the hook
    assert "hermes_constants" not in sys.modules
