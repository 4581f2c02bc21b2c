"""``hermes serve``: an OpenAI-compatible API and a read-only dashboard over the CLI's agent.

Importing this package loads only the standard library and the kernel;
Starlette and uvicorn are imported by :mod:`.app` and :mod:`.server`, which
only ``hermes serve`` itself loads.
"""

from .keys import ApiKey, add_key, hash_key, load_keys, match_key, revoke_key
from .settings import APPROVAL_MODES, ServeSettings, is_loopback

__all__ = [
    "APPROVAL_MODES",
    "ApiKey",
    "ServeSettings",
    "add_key",
    "hash_key",
    "is_loopback",
    "load_keys",
    "match_key",
    "revoke_key",
]
