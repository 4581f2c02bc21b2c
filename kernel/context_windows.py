"""Model metadata: context window and output limit, and where each figure came from.

The resolution chain, first answer wins:

1. config: ``model.context_length`` / ``model.max_output``;
2. the endpoint: an OpenAI-compatible ``GET /models`` entry (``max_model_len``
   from vLLM, ``context_length`` from OpenRouter, LM Studio and others,
   ``context_window`` from Groq, ``top_provider.max_completion_tokens`` and
   pricing from aggregators) or Ollama's ``POST /api/show`` model info;
3. the bundled, dated catalog (:mod:`hermes.kernel.model_catalog`);
4. the probe tiers: 128,000 to start, stepped down (256K → 128K → … → 8K)
   whenever an overflow error states no limit.

Endpoint answers are cached in ``HERMES_HOME/cache/models.json`` for
``ttl`` seconds (24 h by default), misses included, so a chat start asks the
endpoint at most once a day and never waits more than ``timeout``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_CONTEXT_LENGTH",
    "ModelInfo",
    "catalog_entry",
    "context_length_for",
    "endpoint_models",
    "resolve_model",
]

log = logging.getLogger(__name__)

DEFAULT_CONTEXT_LENGTH = 128_000
DEFAULT_TTL = 86_400.0


@dataclass(frozen=True)
class ModelInfo:
    """What is known of one model. ``source``: config, endpoint, catalog or probe."""

    model: str
    context_length: int
    max_output: int | None
    source: str
    detail: str = ""
    pricing: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _bare(model: str) -> str:
    return model.strip().lower().rsplit("/", 1)[-1]  # openrouter-style "vendor/model"


def catalog_entry(model: str) -> tuple[str, Any] | None:
    """``(prefix, CatalogEntry)`` of the longest catalog prefix matching ``model``."""
    from .model_catalog import CATALOG

    name = _bare(model)
    matches = [prefix for prefix in CATALOG if name.startswith(prefix)]
    if not matches:
        return None
    best = max(matches, key=len)
    return best, CATALOG[best]


def context_length_for(model: str, configured: int | None = None) -> int:
    """The window for ``model`` from config or the catalog (no network), else 128,000."""
    if configured:
        return int(configured)
    found = catalog_entry(model)
    return found[1].context_length if found else DEFAULT_CONTEXT_LENGTH


# --- the endpoint -------------------------------------------------------------------


def _int(value: Any) -> int | None:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


def _from_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    """Context, output limit and pricing of one ``/models`` entry, in whatever fields it uses."""
    context = None
    for key in ("max_model_len", "context_length", "context_window", "max_context_length", "max_input_tokens"):
        context = context or _int(entry.get(key))
    top = entry.get("top_provider") if isinstance(entry.get("top_provider"), Mapping) else {}
    context = context or _int(top.get("context_length"))
    output = _int(top.get("max_completion_tokens")) or _int(entry.get("max_output_tokens")) or _int(
        entry.get("max_completion_tokens"))
    pricing = entry.get("pricing") if isinstance(entry.get("pricing"), Mapping) else None
    return {"context_length": context, "max_output": output, "pricing": dict(pricing) if pricing else None}


def _get_json(url: str, timeout: float, body: Any = None, headers: Mapping[str, str] | None = None) -> Any:
    import urllib.request

    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json", **(headers or {})})
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - the user's own endpoint
        return json.loads(response.read().decode("utf-8"))


def endpoint_models(base_url: str, *, api_key: str | None = None, timeout: float = 2.0,
                    fetch: Callable[..., Any] = _get_json) -> dict[str, dict[str, Any]]:
    """What an OpenAI-compatible endpoint says of its models: ``{id: {context_length, max_output, pricing}}``."""
    root = base_url.rstrip("/")
    headers = {"authorization": f"Bearer {api_key}", "x-api-key": api_key} if api_key else {}
    found: dict[str, dict[str, Any]] = {}
    for url in (f"{root}/models", f"{root}/v1/models") if not root.endswith("/v1") else (f"{root}/models",):
        try:
            payload = fetch(url, timeout, None, headers)
        except Exception as exc:  # an endpoint without a model list is normal
            log.debug("no model list at %s: %s", url, exc)
            continue
        for entry in (payload.get("data") or payload.get("models") or []) if isinstance(payload, Mapping) else []:
            if isinstance(entry, Mapping) and entry.get("id"):
                found[str(entry["id"])] = {**_from_entry(entry), "owned_by": entry.get("owned_by")}
        if found:
            break
    return found


def _looks_like_ollama(base_url: str, listed: Mapping[str, Any]) -> bool:
    # Ollama's default port or name; its OpenAI-style list says owned_by "library".
    return ":11434" in base_url or "ollama" in base_url.lower() or any(
        v.get("owned_by") == "library" for v in listed.values())


def _ollama(base_url: str, model: str, timeout: float, fetch: Callable[..., Any]) -> dict[str, Any] | None:
    root = base_url.rstrip("/").removesuffix("/v1")
    try:
        payload = fetch(f"{root}/api/show", timeout, {"model": model}, None)
    except Exception:
        return None
    info = payload.get("model_info") if isinstance(payload, Mapping) else None
    if not isinstance(info, Mapping):
        return None
    context = next((_int(v) for k, v in info.items() if str(k).endswith(".context_length")), None)
    return {"context_length": context, "max_output": None, "pricing": None} if context else None


# --- the cache ------------------------------------------------------------------------


def _cache_path(home: Any) -> Path | None:
    path = getattr(home, "path", None)
    return Path(path) / "cache" / "models.json" if path is not None else None


def _cached(home: Any, key: str, ttl: float) -> dict[str, Any] | None:
    path = _cache_path(home)
    if path is None or not path.exists():
        return None
    try:
        entry = json.loads(path.read_text(encoding="utf-8")).get(key)
    except (OSError, ValueError):
        return None
    if isinstance(entry, dict) and time.time() - float(entry.get("fetched_at", 0)) < ttl:
        return entry
    return None


def _store(home: Any, key: str, value: dict[str, Any]) -> None:
    path = _cache_path(home)
    if path is None:
        return
    from .home import atomic_write

    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, ValueError):
        data = {}
    data[key] = {**value, "fetched_at": time.time()}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
    except OSError as exc:  # a read-only home only loses the cache
        log.debug("could not cache model metadata: %s", exc)


# --- the chain --------------------------------------------------------------------------


def resolve_model(
    model: str,
    *,
    configured: int | None = None,
    configured_output: int | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    home: Any = None,
    ttl: float = DEFAULT_TTL,
    timeout: float = 2.0,
    fetch: Callable[..., Any] = _get_json,
) -> ModelInfo:
    """Context window and output limit of ``model`` by the resolution chain (module docstring)."""
    from .model_catalog import CATALOG_DATE, SOURCES

    found = catalog_entry(model)
    catalog_output = found[1].max_output if found else None
    if configured:
        return ModelInfo(model, int(configured), configured_output or catalog_output, "config",
                         "model.context_length in config")
    if base_url:
        key = f"{base_url.rstrip('/')}|{model}"
        entry = _cached(home, key, ttl)
        if entry is None:
            listed = endpoint_models(base_url, api_key=api_key, timeout=timeout, fetch=fetch)
            entry = listed.get(model) or next((v for k, v in listed.items() if _bare(k) == _bare(model)), None)
            if (entry is None or not entry.get("context_length")) and _looks_like_ollama(base_url, listed):
                entry = _ollama(base_url, model, timeout, fetch) or entry
            entry = dict(entry or {})
            _store(home, key, entry)
        if entry.get("context_length"):
            return ModelInfo(model, int(entry["context_length"]),
                             configured_output or entry.get("max_output") or catalog_output, "endpoint",
                             f"reported by {base_url}", entry.get("pricing"))
    if found:
        prefix, item = found
        return ModelInfo(model, item.context_length, configured_output or item.max_output, "catalog",
                         f"bundled catalog of {CATALOG_DATE}, entry {prefix!r}, from {SOURCES[item.family]}")
    return ModelInfo(model, DEFAULT_CONTEXT_LENGTH, configured_output, "probe",
                     "unknown model: starts at 128,000 and steps down 256K → 128K → 64K → 32K → 16K → 8K "
                     "when the provider refuses a request as too long")
