"""The model client: a provider driver plus the credential pool, retries and cost.

This is what the agent loop calls. One :class:`ModelClient` serves one
provider; it picks a key from the pool (the session's leased key first),
retries classified, retryable failures with backoff, rotates to the next key
on rate-limit, billing and auth failures without spending that key's retry
budget, and prices every response.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import PluginLoadError
from .base import ModelProvider, ModelRequest, ModelResponse, StreamDelta, StreamItem, final_response
from .errors import ProviderError
from .pricing import compute_cost
from .retry import RetryPolicy

if TYPE_CHECKING:
    from ..config import Config
    from ..credentials import Credential, CredentialLease, CredentialPool
    from ..home import HermesHome
    from ..host import PluginHost

__all__ = ["ModelClient", "open_model_client"]


def _refused(provider: str, credential: Credential, error: ProviderError) -> ProviderError:
    """The 401 a retry did not fix: which key, where it comes from, how to fix it."""
    where = {"env": f"the environment or .env ({credential.label})", "config": f"config.yaml ({credential.label})",
             "auth.json": f"auth.json ({credential.label})"}.get(credential.source, credential.label)
    return ProviderError(
        "auth",
        f"the {provider} key {credential.masked} from {where} was refused as unauthorised twice; "
        f"check it, replace it with `hermes auth add {provider}`, or remove it with `hermes auth remove {provider} LABEL`",
        status=error.status,
        provider=provider,
        should_rotate_credential=False,
    )


def _label(credential: Credential | None) -> str:
    """How logs name a key: its label, never the key; ``-`` without one."""
    return credential.label if credential is not None else "-"


def _mapping(config: Config, key: str) -> Mapping[str, Any]:
    """The mapping at ``key``; {} when it is absent or null."""
    return config.get(key, None) or {}


log = logging.getLogger(__name__)

PROVIDERS_GROUP = "hermes.model_providers"
STRATEGIES_GROUP = "hermes.credential_strategies"


class ModelClient:
    """Complete or stream requests with credentials, retries and cost handled."""

    def __init__(
        self,
        name: str,
        provider_class: type[ModelProvider],
        pool: CredentialPool | None,
        *,
        base_url: str | None = None,
        timeout: float = 600.0,
        options: Mapping[str, Any] | None = None,
        retry: RetryPolicy | None = None,
        pricing: Mapping[str, Any] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.name = name
        self.provider_class = provider_class
        self.pool = pool
        self.base_url = base_url
        self.timeout = timeout
        self.options = dict(options or {})
        self.retry = retry or RetryPolicy()
        self.pricing = dict(pricing or {})
        self.sleep = sleep
        self._providers: dict[str | None, ModelProvider] = {}

    @property
    def max_tools(self) -> int | None:
        """Most tools one request may carry, as the provider declares (None: no limit)."""
        return getattr(self.provider_class, "max_tools", None)

    def provider(self, credential: Credential | None) -> ModelProvider:
        """The provider instance bound to ``credential`` (one SDK client per key, reused)."""
        slot = credential.id if credential is not None else None
        found = self._providers.get(slot)
        if found is None:
            found = self._providers[slot] = self.provider_class(
                api_key=credential.key if credential is not None else None,
                base_url=self.base_url,
                timeout=self.timeout,
                options=self.options,
            )
        return found

    def lease(self) -> CredentialLease | None:
        """A soft claim on one key for a session (None without a pool or keys)."""
        if self.pool is None or not self.pool.credentials():
            return None
        return self.pool.lease()

    def complete(self, request: ModelRequest, *, lease: CredentialLease | None = None) -> ModelResponse:
        return final_response(self._execute(request, lease, lambda p: iter((p.complete(request),))))

    def stream(self, request: ModelRequest, *, lease: CredentialLease | None = None) -> Iterator[StreamItem]:
        """Yield text deltas, then the priced :class:`ModelResponse`."""
        return self._execute(request, lease, lambda p: p.stream(request))

    def _first_credential(self, lease: CredentialLease | None) -> Credential | None:
        from ..credentials import NoCredentialsError

        if self.pool is None:
            return None
        try:
            return self.pool.select(lease.credential if lease is not None else None)
        except NoCredentialsError:
            if self.base_url:
                return None  # a local server (llama.cpp, Ollama) that needs no key
            raise

    def _execute(
        self,
        request: ModelRequest,
        lease: CredentialLease | None,
        call: Callable[[ModelProvider], Iterator[StreamItem]],
    ) -> Iterator[StreamItem]:
        credential = self._first_credential(lease)
        attempt = 0  # attempts on the current key only
        observer, tries = request.observer, 0  # the api hooks count every request of the call
        while True:
            attempt += 1
            tries += 1
            emitted = False
            label = _label(credential)
            if observer is not None:
                observer.before(request.model, tries)
                started = time.perf_counter()
            try:
                for item in call(self.provider(credential)):
                    if isinstance(item, StreamDelta):
                        emitted = True
                    elif isinstance(item, ModelResponse):
                        item.cost = compute_cost(request.model, item.usage, self.pricing,
                                                 reported_usd=item.reported_cost_usd)
                        # Before the yield: the caller may stop iterating once it has the response.
                        if credential is not None and self.pool is not None:
                            self.pool.record_success(credential)
                        if observer is not None:
                            observer.after(request.model, tries, item.usage.as_dict(), time.perf_counter() - started)
                    yield item
            except ProviderError as error:
                log.debug("%s %s attempt %d with key %s: %s (retryable=%s rotate=%s)", self.name,
                          request.model, attempt, label, error.reason, error.retryable,
                          error.should_rotate_credential)
                step = None if emitted else self._recover(error, credential, attempt)
                if observer is not None:
                    observer.error(request.model, tries, error.reason, str(error), isinstance(step, tuple))
                if emitted:
                    raise  # text already reached the user; a retry would repeat it
                if step is None:
                    raise
                if isinstance(step, ProviderError):
                    raise step from None
                following, wait = step
                if following is not credential:
                    log.debug("%s: rotating from key %s to %s", self.name, label, _label(following))
                    credential, attempt = following, 0  # a fresh budget for the new key
                if wait:
                    log.debug("%s: retrying in %.2fs", self.name, wait)
                    self.sleep(wait)
                continue
            log.debug("%s %s attempt %d with key %s: ok", self.name, request.model, attempt, label)
            return

    def _recover(
        self, error: ProviderError, credential: Credential | None, attempt: int
    ) -> tuple[Credential | None, float] | ProviderError | None:
        """What to do after ``error``: ``(key, wait)`` to try again, an error to raise instead, or None (raise it).

        Keys: a rate limit with reset information cools the key exactly that
        long; without it the same key is retried once, then cooled (60 s) and
        rotated. Billing rotates at once; a 401 is retried once on the same key,
        then cools it and rotates, or names the key and the fix.
        """
        if error.should_rotate_credential and credential is not None and self.pool is not None:
            if error.reason == "auth":
                if attempt == 1:
                    return credential, 0.0  # one retry: a proxy or a rotated token may have been stale
                following = self._next_credential(credential, mark=error, only_if_other=True)
                if following is not None:
                    return following, 0.0
                return _refused(self.name, credential, error)
            if error.reason in ("rate_limit", "billing"):
                told = error.retry_after is not None
                if error.reason == "billing" or told or attempt >= 2:
                    following = self._next_credential(credential, mark=error)
                    if following is not None:
                        return following, 0.0
                if error.reason == "billing":
                    return None
        if not error.retryable or attempt >= self.retry.max_attempts:
            return None
        if error.reason == "unknown" and attempt >= 2:
            return None  # retried once: an unclassified failure that repeats is not transient
        wait = self.retry.delay(attempt, error)
        if wait is None:
            return None
        return credential, wait

    def _next_credential(self, current: Credential, *, mark: ProviderError | None = None,
                         only_if_other: bool = False) -> Credential | None:
        """Another usable key after cooling ``current`` down for ``mark``; None if there is none."""
        from ..credentials import CredentialsExhaustedError

        assert self.pool is not None
        if mark is not None:
            if only_if_other and not any(c.key != current.key for c in self.pool.credentials()):
                return None  # a cooldown cannot fix the only key; the user must
            self.pool.mark_exhausted(current, mark)
        try:
            following = self.pool.select()
        except CredentialsExhaustedError:
            return None
        return following if following.key != current.key else None

    def abort(self) -> None:
        """Close every provider's connections (from another thread: Ctrl-C mid-request)."""
        providers = list(self._providers.values())
        self._providers.clear()
        for provider in providers:
            try:
                provider.close()
            except Exception:  # the reader thread may be tearing the same client down
                log.debug("closing %s during an abort failed", self.name, exc_info=True)

    def close(self) -> None:
        for provider in self._providers.values():
            provider.close()
        self._providers.clear()


def open_model_client(
    host: PluginHost,
    config: Config,
    home: HermesHome,
    *,
    provider: str | None = None,
    environ: Mapping[str, str] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> ModelClient:
    """The client for ``provider`` (default ``model.provider``) as configured.

    Loads the provider driver and the credential strategy
    (``credential_pool_strategies.<provider>``, default ``fill_first``)
    through the plugin host; an unknown name raises PluginNotFoundError.
    """
    from ..credentials import CredentialPool, env_key_for
    from ..credentials.sources import strategy_name_for

    env = os.environ if environ is None else environ
    name = provider or str(config.get("model.provider"))
    provider_class = host.driver(PROVIDERS_GROUP, name)
    if not (isinstance(provider_class, type) and issubclass(provider_class, ModelProvider)):
        raise PluginLoadError(PROVIDERS_GROUP, name, "does not name a hermes.kernel.ModelProvider subclass")
    # On a Hermes Agent home, Hermes Agent's setting for the same pool applies when the kernel has none.
    strategy_name = strategy_name_for(name, _mapping(config, "credential_pool_strategies"), home.path)
    strategy = host.driver(STRATEGIES_GROUP, strategy_name)
    strategy = strategy() if isinstance(strategy, type) else strategy
    pool_settings = _mapping(config, "credential_pool")
    pool = CredentialPool(
        name,
        home=home,
        strategy=strategy,
        config_keys=_mapping(config, "credentials").get(name),
        env_name=env_key_for(name, provider_class),
        environ=env,
        cooldowns={
            "rate_limit": float(pool_settings.get("rate_limit_cooldown", 60)),
            "billing": float(pool_settings.get("billing_cooldown", 3600)),
            "auth": float(pool_settings.get("auth_cooldown", 300)),
        },
        lease_ttl=float(pool_settings.get("lease_ttl", 900)),
    )
    env_url = env.get(provider_class.env_base_url) if provider_class.env_base_url else None
    base_url = config.get("model.base_url", None) or env_url
    if env_url and getattr(config, "hermes", None) is not None:
        # A config.yaml shared with Hermes Agent: Hermes Agent never reads OPENAI_BASE_URL or
        # ANTHROPIC_BASE_URL, so a user who sets one means it for us, over the file's endpoint.
        base_url = env_url
    return ModelClient(
        name,
        provider_class,
        pool,
        base_url=base_url or None,
        timeout=float(config.get("model.timeout", 600.0)),
        options={"prompt_caching": config.get("model.prompt_caching", True)},
        retry=RetryPolicy.from_config(config.get("retries", {})),
        pricing=_mapping(config, "pricing.models"),
        sleep=sleep,
    )
