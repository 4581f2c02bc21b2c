"""A sample of packages from PyPI written for Hermes Agent, kept as wheels for offline tests.

The wheels (with every requirement) are downloaded once into a folder beside
the Hermes Agent releases (:func:`tests.hermes_agent.cache_dir`); tests then
install from that folder only (``PIP_NO_INDEX`` + ``PIP_FIND_LINKS``), so they
are offline and fast. docs/hermes-agent.md ("Plugins from PyPI") reports the
same sample with what each one does on Hermes Agent 0.19.0 and here.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from tests.hermes_agent import cache_dir

__all__ = ["SAMPLE", "Sample", "offline_pip_env", "wheelhouse"]


class Sample(NamedTuple):
    """One package: how a user meets it and what it registers (facts read from the package)."""

    requirement: str
    #: ``plugin`` (hermes_agent.plugins), ``folder`` (an installer writes HERMES_HOME/plugins/<name>),
    #: ``memory`` or ``model`` (a provider in an entry-point group Hermes Agent 0.19.0 does not read).
    kind: str
    #: The entry-point name (plugin, memory, model) or the folder name (folder).
    name: str
    #: Tools, hooks and slash commands it registers on Hermes Agent 0.19.0 (plugin kind only).
    tools: tuple[str, ...] = ()
    hooks: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    #: A tool call a scripted chat makes, and text its real result contains.
    call: tuple[str, str] = ("", "")
    expect: str = ""

    @property
    def dist(self) -> str:
        return self.requirement.split("==")[0]


SAMPLE: tuple[Sample, ...] = (
    Sample("hermes-plugin-guard==0.2.1", "plugin", "hermes-plugin-guard", tools=("plugin_guard_review_candidate",)),
    Sample("hermes-snow-search==0.7.0", "plugin", "hermes-snow-search", tools=("snow_search",),
           hooks=("pre_llm_call", "post_tool_call", "post_llm_call"), call=("snow_search", '{"query": "staging"}')),
    Sample("hermes-dreaming==0.3.2", "plugin", "hermes-dreaming",
           tools=("dreaming_stage_candidates", "dreaming_write_dream_report", "dreaming_apply_memory_op",
                  "dreaming_record_decisions", "dreaming_finalize_run", "dreaming_get_state"),
           hooks=("on_session_end",), commands=("dreaming",), call=("dreaming_get_state", "{}")),
    Sample("hardproof==1.0.1", "plugin", "hardproof",
           tools=("hardproof_transition", "hardproof_run", "hardproof_task", "hardproof_report", "hardproof_verify",
                  "hardproof_record"),
           hooks=("pre_llm_call", "on_session_start", "on_session_finalize", "on_session_reset", "pre_tool_call",
                  "post_tool_call", "pre_verify"),
           commands=("hardproof",)),
    Sample("caspase-hermes==0.1.0a1", "plugin", "caspase",
           hooks=("pre_tool_call", "post_tool_call", "pre_llm_call", "post_api_request", "on_session_end")),
    Sample("noisegate-hermes==0.3.3", "plugin", "noisegate", hooks=("transform_tool_result", "transform_terminal_output")),
    Sample("hermes-chat-recorder==0.7.4", "plugin", "chat_recorder", hooks=("pre_gateway_dispatch",)),
    Sample("agentguard-spend-hermes==0.4.1", "plugin", "agentguard-spend",
           hooks=("pre_approval_request", "post_approval_response"), commands=("agentguard",)),
    Sample("hermead==0.2.0", "plugin", "hermead", hooks=("post_tool_call",), commands=("hermead",)),
    Sample("rtk-hermes==1.2.3", "plugin", "rtk-rewrite", commands=("rtk",)),
    Sample("memento-lifecycle==0.1.1", "plugin", "memento", commands=("memento.init",)),
    Sample("hermes-local-memory==0.3.1", "folder", "local_memory",
           call=("memory_search", '{"query": "staging"}'), expect='"success"'),
    Sample("hermes-okf==0.5.9", "memory", "hermes-okf", call=("search_memory", '{"query": "staging"}'), expect='"count"'),
    Sample("verbatim-memory==1.0.0", "memory", "verbatim",
           call=("verbatim_recall", '{"query": "staging port"}'), expect='"ok": true'),
    Sample("hermes-apertis-provider==1.1.0", "model", "apertis"),
)  # fmt: skip

#: A published package that requires hermes-agent (``hermes-agent<0.19,>=0.18.2``), for the install fault rows.
NEEDS_HERMES_AGENT = "tokenlab-hermes-provider==0.1.0"


#: What pip needs to build a local project offline (build isolation installs these from the wheelhouse).
BUILD_TOOLS = ("setuptools", "wheel")


def wheelhouse() -> Path:
    """The folder holding the sample's wheels and every requirement, downloaded on first use."""
    root = cache_dir().parent / "pypi-plugins"
    done = root / ".complete"
    wanted = [s.requirement for s in SAMPLE]
    stamp = "\n".join([*wanted, NEEDS_HERMES_AGENT, *BUILD_TOOLS])  # a changed sample downloads what it lacks
    if done.exists() and done.read_text(encoding="utf-8") == stamp:
        return root
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:  # xdist workers share the cache
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists() and done.read_text(encoding="utf-8") == stamp:
            return root
        _pip("download", "--only-binary", ":all:", "-d", str(root), *wanted, *BUILD_TOOLS)
        _pip("download", "--no-deps", "--only-binary", ":all:", "-d", str(root), NEEDS_HERMES_AGENT)
        done.write_text(stamp, encoding="utf-8")
    return root


def offline_pip_env() -> dict[str, str]:
    """pip settings that make every install read the wheelhouse only."""
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse()), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def _pip(*args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    proc = subprocess.run([sys.executable, "-m", "pip", "-q", *args], capture_output=True, text=True, timeout=900, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"pip {' '.join(args[:2])} failed (the sample comes from PyPI):\n{proc.stderr[-2000:]}")
