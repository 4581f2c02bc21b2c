"""Hermes-format plugins outside the kernel's contract, as drivers and listeners of the kernel's slots.

* Folder plugins in ``HERMES_HOME/plugins/<name>/``: a memory provider becomes one more
  driver of ``hermes.memory_providers``; a general plugin (``plugin.yaml`` +
  ``register(ctx)``) one more ``hermes.plugins`` listener, as does an entry point of
  Hermes Agent's ``hermes_agent.plugins`` group.
* Packages written for Hermes Agent: entry points in ``hermes_agent.memory_providers``
  and ``hermes_agent.model_providers`` (groups published packages declare), and
  third-party entries of ``hermes.memory_providers`` (some name a Hermes-format class).

The plugin host adds each one to its entry-point index (one discovery path, not a
second plugin system). Discovery reads file names, metadata and at most the head of
``__init__.py``; nothing is imported until the plugin is used, and then through
``hermes.compat.hermes``, which adapts a foreign object and passes a kernel-native one through.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

__all__ = [
    "AGENT_PLUGINS_GROUP",
    "FOLDER_GROUP",
    "HERMES_AGENT_GROUPS",
    "AgentEntryPoint",
    "FolderEntry",
    "GeneralFolderEntry",
    "HermesPackageEntry",
    "is_folder_provider",
    "is_general_plugin",
    "scan_folders",
    "scan_general_folders",
]

#: The slot a folder plugin becomes a driver of.
FOLDER_GROUP = "hermes.memory_providers"
#: Hermes Agent's entry-point groups and the kernel slot each one feeds.
HERMES_AGENT_GROUPS = {
    "hermes_agent.memory_providers": "hermes.memory_providers",
    "hermes_agent.model_providers": "hermes.model_providers",
}
#: Where Hermes Agent's general plugins (``plugin.yaml`` folders, its entry-point group) listen.
GENERAL_GROUP = "hermes.plugins"
#: Hermes Agent's own entry-point group for general plugins.
AGENT_PLUGINS_GROUP = "hermes_agent.plugins"


def _load_folder(folder: Path) -> Any:
    from hermes.compat.hermes import load_folder_provider  # only when a folder provider is used

    return load_folder_provider(folder)


class FolderEntry:
    """What the host's index holds for a folder: its name is the folder's, its version from ``plugin.yaml``.

    Its ``distribution`` is the folder name, so ``HERMES_LOAD_PLUGINS`` and
    ``plugins.disabled`` name a folder the way they name a distribution.
    """

    kind = "folder"
    group = FOLDER_GROUP

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.name = folder.name
        self.value = str(folder)

    def load(self) -> Any:
        """The kernel driver class wrapping the folder's provider."""
        return _load_folder(self.folder)

    @functools.cached_property
    def entry_point(self) -> Any:
        """The folder as an ``importlib.metadata.EntryPoint`` (for stevedore); ``load()`` as above."""
        import importlib.metadata as metadata

        entry = self

        class _FolderEntryPoint(metadata.EntryPoint):
            def load(self) -> Any:
                return entry.load()

        return _FolderEntryPoint(name=self.name, value=self.value, group=self.group)

    @property
    def distribution(self) -> str:
        return self.folder.name

    @functools.cached_property
    def version(self) -> str:
        from hermes.compat.hermes import read_manifest

        return str(read_manifest(self.folder).get("version") or "")


class HermesPackageEntry:
    """An installed entry point whose object may be written for Hermes Agent; loads through the compat layer.

    ``record`` is an :class:`~hermes.kernel.entry_index.EntryRecord`; ``group`` is the
    kernel slot it is a driver of, ``declared_group`` the group the package declared.
    """

    kind = "package"

    def __init__(self, record: Any, group: str) -> None:
        self.record = record
        self.group = group
        self.declared_group = record.group
        self.name, self.value = record.name, record.value
        self.distribution, self.version = record.distribution, record.version

    def load(self) -> Any:
        """The kernel driver class: a kernel-native class as it is, a Hermes-format object adapted."""
        from hermes.compat.hermes import memory_driver, model_driver  # only when such a provider is used

        make = model_driver if self.group == "hermes.model_providers" else memory_driver
        return make(self.value, self.name, self.distribution)

    @functools.cached_property
    def entry_point(self) -> Any:
        """The entry as an ``importlib.metadata.EntryPoint`` (for stevedore) whose ``load()`` is :meth:`load`."""
        import importlib.metadata as metadata

        outer = self

        class _HermesEntryPoint(metadata.EntryPoint):
            def load(self) -> Any:
                return outer.load()

        return _HermesEntryPoint(name=self.name, value=self.value, group=self.group)


def is_folder_provider(folder: Path) -> bool:
    """A folder holding a Hermes-format memory provider: an ``__init__.py`` that mentions the
    provider contract (read, never imported). Other Hermes plugin folders (tools, hooks) are not."""
    init = folder / "__init__.py"
    if folder.name.startswith(("_", ".")) or not init.is_file():
        return False
    try:
        head = init.read_text(encoding="utf-8", errors="replace")[:8192]
    except OSError:
        return False
    return "MemoryProvider" in head or "register_memory_provider" in head


def scan_folders(dirs: Iterable[Path], taken: Collection[str]) -> list[FolderEntry]:
    """Provider folders in ``dirs``: the first folder of a name wins, and none shadows a name in ``taken``."""
    found: dict[str, FolderEntry] = {}
    for root in dirs:
        try:
            children = sorted(p for p in Path(root).iterdir() if p.is_dir())
        except OSError:  # missing or unreadable: nothing there
            continue
        for child in children:
            if child.name not in found and child.name not in taken and is_folder_provider(child):
                found[child.name] = FolderEntry(child)
    return list(found.values())


def is_general_plugin(folder: Path) -> bool:
    """A Hermes Agent general plugin folder: a ``plugin.yaml`` (or ``.yml``) and not a memory provider."""
    if folder.name.startswith(("_", ".")) or is_folder_provider(folder):
        return False
    return (folder / "plugin.yaml").is_file() or (folder / "plugin.yml").is_file()


class GeneralFolderEntry(FolderEntry):
    """A general plugin folder as a ``hermes.plugins`` entry: loading it runs its ``register(ctx)``.

    Name, distribution and version come from the folder as for a provider folder.
    """

    group = GENERAL_GROUP

    def load(self) -> Any:
        """The hook listener built from what the folder's ``register(ctx)`` registered."""
        from hermes.compat.hermes import load_general_folder  # only when a general plugin folder exists

        return load_general_folder(self.folder)


class AgentEntryPoint:
    """An entry point of Hermes Agent's ``hermes_agent.plugins`` group, listed as a ``hermes.plugins`` entry."""

    kind = "entry point"
    group = GENERAL_GROUP

    def __init__(self, record: Any) -> None:
        self.record = record
        self.name, self.value = record.name, record.value
        self.distribution, self.version = record.distribution, record.version

    def load(self) -> Any:
        from hermes.compat.hermes import load_general_entry_point

        return load_general_entry_point(self.record)


def scan_general_folders(dirs: Iterable[Path], taken: Collection[str]) -> list[GeneralFolderEntry]:
    """General plugin folders in ``dirs``, first of a name wins, none shadowing a name in ``taken``."""
    found: dict[str, GeneralFolderEntry] = {}
    for root in dirs:
        try:
            children = sorted(p for p in Path(root).iterdir() if p.is_dir())
        except OSError:
            continue
        for child in children:
            if child.name not in found and child.name not in taken and is_general_plugin(child):
                found[child.name] = GeneralFolderEntry(child)
    return list(found.values())
