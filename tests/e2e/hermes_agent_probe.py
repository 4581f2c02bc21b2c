"""Run by Hermes Agent 0.19.0 itself (``python hermes_agent_probe.py TARGET SAMPLE_JSON``), never imported.

``TARGET`` holds the sample's packages (``pip install --target``), on
``PYTHONPATH`` beside the release. Prints one JSON object: for each sample
package what Hermes Agent made of it, through its own plugin manager, memory
provider loader and provider registry.
"""

from __future__ import annotations

import importlib.metadata as metadata
import json
import os
import subprocess
import sys

import yaml

target, sample = sys.argv[1], json.loads(sys.argv[2])
home = os.environ["HERMES_HOME"]
general = [s for s in sample if s["kind"] == "plugin"]
with open(os.path.join(home, "config.yaml"), "w", encoding="utf-8") as fh:
    yaml.safe_dump({"plugins": {"enabled": [s["name"] for s in general]}}, fh)

from hermes_cli.plugins import get_plugin_manager  # noqa: E402
from tools.registry import registry  # noqa: E402

out: dict[str, dict] = {}
manager = get_plugin_manager()
manager.discover_and_load()
for s in general:
    loaded = manager._plugins.get(s["name"])
    row = {"seen": loaded is not None}
    if loaded is not None:
        row.update(error=loaded.error, tools=sorted(loaded.tools_registered), hooks=sorted(loaded.hooks_registered),
                   commands=sorted(loaded.commands_registered))  # fmt: skip
        if s["call"][0] and not loaded.error:
            row["result"] = str(registry.dispatch(s["call"][0], json.loads(s["call"][1])))[:500]
    out[s["dist"]] = row

# Folder installers: the package's own command writes HERMES_HOME/plugins/<name>/, then Hermes loads that folder.
from plugins.memory import discover_memory_providers, load_memory_provider  # noqa: E402

for s in sample:
    if s["kind"] != "folder":
        continue
    script = os.path.join(target, "bin", s["dist"])
    proc = subprocess.run([sys.executable, script, "install-shim", "--hermes-home", home], capture_output=True, text=True)
    provider = load_memory_provider(s["name"]) if proc.returncode == 0 else None
    row = {"seen": provider is not None, "installer": proc.returncode}
    if provider is not None:
        provider.initialize("probe-session", hermes_home=home, platform="cli", agent_context="primary")
        row["result"] = str(provider.handle_tool_call(s["call"][0], json.loads(s["call"][1])))[:500]
    out[s["dist"]] = row

# Providers declared only in entry-point groups: does Hermes Agent see them at all?
names = {name for name, _, _ in discover_memory_providers()}
import providers  # noqa: E402

for s in sample:
    if s["kind"] == "memory":
        out[s["dist"]] = {"seen": s["name"] in names}
    elif s["kind"] == "model":
        out[s["dist"]] = {"seen": providers.get_provider_profile(s["name"]) is not None}
declared = sorted({ep.group for d in metadata.distributions(path=[target]) for ep in d.entry_points if ep.group.startswith("hermes")})
print(json.dumps({"packages": out, "groups": declared}))
