"""HERMES_HOME, profiles and the files that live there.

``HERMES_HOME`` (default ``~/.hermes``) is the root. A profile ``NAME`` is a
complete home of its own in ``HERMES_HOME/profiles/NAME``; ``default`` is the
root itself. The active profile comes from ``-p/--profile``, then
``HERMES_PROFILE``, then the ``active_profile`` file written by
``hermes profile use``.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import HermesError

__all__ = [
    "DEFAULT_PROFILE",
    "HermesHome",
    "active_home",
    "atomic_write",
    "file_lock",
    "hermes_root",
    "lock_file_for",
    "read_active_profile",
    "resolve_home",
    "set_active_home",
    "validate_profile_name",
    "write_active_profile",
]

DEFAULT_PROFILE = "default"
_PROFILE_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


def hermes_root(environ: os._Environ[str] | dict[str, str] | None = None) -> Path:
    """The root home: ``$HERMES_HOME`` or ``~/.hermes``."""
    env = os.environ if environ is None else environ
    raw = env.get("HERMES_HOME")
    return Path(raw).expanduser() if raw else Path.home() / ".hermes"


def validate_profile_name(name: str) -> str:
    """Return ``name`` if it is a valid profile name, else raise HermesError."""
    if not _PROFILE_RE.match(name):
        raise HermesError(
            f"invalid profile name {name!r}: use 1-64 lowercase letters, digits, '-' or '_'"
        )
    return name


@dataclass(frozen=True)
class HermesHome:
    """The folder of one profile and the well-known paths inside it."""

    root: Path
    profile: str

    @property
    def path(self) -> Path:
        if self.profile == DEFAULT_PROFILE:
            return self.root
        return self.root / "profiles" / self.profile

    def __fspath__(self) -> str:
        # Path-like: providers written as ``os.path.join(str(home), ...)`` or
        # ``Path(home)`` both reach the profile folder.
        return str(self.path)

    def __str__(self) -> str:
        return str(self.path)

    @property
    def plugins_dir(self) -> Path:
        """Folder plugins (Hermes-format memory providers) of this profile."""
        return self.path / "plugins"

    @property
    def config_path(self) -> Path:
        return self.path / "config.yaml"

    @property
    def env_path(self) -> Path:
        return self.path / ".env"

    @property
    def auth_path(self) -> Path:
        return self.path / "auth.json"

    @property
    def state_db(self) -> Path:
        """The kernel's SQLite store: ``state.db``, or :attr:`own_state_db` once that exists.

        A home shared with Hermes Agent keeps Hermes Agent's ``state.db`` as it
        is; ``hermes import hermes`` copies its history into the kernel's own file.
        """
        own = self.own_state_db
        return own if own.exists() else self.path / "state.db"

    @property
    def own_state_db(self) -> Path:
        """Where the kernel keeps its store in a home whose ``state.db`` is Hermes Agent's."""
        return self.path / "hermes-kernel" / "state.db"

    @property
    def shared_state_db(self) -> Path:
        """``state.db`` itself, whoever wrote it."""
        return self.path / "state.db"

    @property
    def memories_dir(self) -> Path:
        return self.path / "memories"

    @property
    def skills_dir(self) -> Path:
        return self.path / "skills"

    @property
    def results_dir(self) -> Path:
        return self.path / "results"

    @property
    def logs_dir(self) -> Path:
        return self.path / "logs"

    def exists(self) -> bool:
        return self.path.is_dir()

    def ensure(self) -> HermesHome:
        """Create the profile folder (private to the user) if it is missing.

        ``logs/`` and ``results/`` are created private too (and an older ``logs/`` is
        tightened), so a log or a saved output is never readable by others, whatever mode
        the plugin that wrote it used.
        """
        self.path.mkdir(parents=True, exist_ok=True, mode=0o700)
        for folder in (self.logs_dir, self.results_dir):
            folder.mkdir(exist_ok=True, mode=0o700)
            if folder.stat().st_mode & 0o077:
                folder.chmod(0o700)
        return self


def _active_profile_file(root: Path) -> Path:
    return root / "active_profile"


def read_active_profile(root: Path) -> str:
    """The profile chosen by ``hermes profile use``, or ``default``."""
    try:
        name = _active_profile_file(root).read_text(encoding="utf-8").strip()
    except (FileNotFoundError, NotADirectoryError):
        return DEFAULT_PROFILE
    return name or DEFAULT_PROFILE


def write_active_profile(root: Path, name: str) -> None:
    """Make ``name`` the profile used when none is given."""
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    atomic_write(_active_profile_file(root), name + "\n", mode=0o644)


def resolve_home(
    profile: str | None = None, environ: os._Environ[str] | dict[str, str] | None = None
) -> HermesHome:
    """The active home: flag, then ``HERMES_PROFILE``, then ``active_profile``."""
    env = os.environ if environ is None else environ
    root = hermes_root(env)
    name = profile or env.get("HERMES_PROFILE") or read_active_profile(root)
    validate_profile_name(name)
    home = HermesHome(root=root, profile=name)
    if name != DEFAULT_PROFILE and not home.exists():
        raise HermesError(
            f"profile {name!r} does not exist; create it with `hermes profile create {name}`"
        )
    return home


_active: HermesHome | None = None


def set_active_home(home: HermesHome | None) -> None:
    """Record the home this process works in (the CLI does so once it resolved the profile)."""
    global _active
    _active = home


def active_home() -> HermesHome:
    """The active profile's home, available to plugin code at any time, construction included.

    The home recorded by :func:`set_active_home`, else the one the environment
    selects (:func:`resolve_home`).
    """
    return _active if _active is not None else resolve_home()


def atomic_write(path: Path, data: str | bytes, *, mode: int = 0o600) -> None:
    """Write ``data`` (text as UTF-8, or bytes) to ``path`` so readers see the old or the new file, never half.

    The temporary file is created with ``mode`` from the start, so a secret is
    never readable by others, not even for an instant.
    """
    import tempfile  # its import pulls in random and hashlib, which `hermes --help` never needs

    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:  # name the file the user knows, not the temporary one
        raise type(exc)(exc.errno, exc.strerror, str(path)) from None
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def lock_file_for(path: Path) -> Path:
    """The side file whose lock guards ``path``: ``.NAME.lock`` beside it (``.env.lock`` for ``.env``)."""
    return path.with_name(f".{path.name.lstrip('.')}.lock")


# One re-entrant lock per lock file in this process, and the descriptor that holds its
# flock while some thread is inside: flock locks belong to an open file, so a second
# open by the thread already holding it would wait for itself.
_THREAD_LOCKS: dict[str, threading.RLock] = {}
_HELD: dict[str, int] = {}
_GUARD = threading.Lock()


@contextlib.contextmanager
def file_lock(lock: Path) -> Iterator[None]:
    """Hold an exclusive lock on the side file ``lock`` against other threads and processes.

    For a read-modify-write of a file that :func:`atomic_write` replaces: the lock is on a
    side file (created 0600), never on the data file, whose inode each write swaps out.
    Re-entrant in a thread, so an update may call another that takes the same lock.
    Without ``fcntl`` (not POSIX) only threads are excluded; the writes stay atomic.
    """
    key = os.path.abspath(lock)
    with _GUARD:
        thread_lock = _THREAD_LOCKS.setdefault(key, threading.RLock())
    with thread_lock:
        if key in _HELD:  # this thread holds it already
            yield
            return
        try:
            import fcntl
        except ImportError:
            fcntl = None  # type: ignore[assignment]
        lock.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            _HELD[key] = fd
            try:
                yield
            finally:
                del _HELD[key]
        finally:
            os.close(fd)  # closing the last descriptor of the open file releases its flock
