"""The Starlette application: auth, limits, the OpenAI-compatible routes and the dashboard.

Routes translate the wire format into :class:`~.runner.TurnSpec` and the
agent's events back into JSON or SSE; the turn itself is the CLI's
``Agent.run_conversation``. Importing this module imports Starlette; nothing
on the ``hermes --help`` path does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from hermes.kernel import __version__
from hermes.kernel.home import HermesHome
from .errors import RequestError, error_body
from .guard import GuardMiddleware
from .keys import ApiKey
from .limits import LimitExceeded
from .profiles import Profile
from .runner import QueueFull, ServerDraining, Turn, TurnSpec
from .tenants import Scope
from .wire_chat import ChatStream, chat_json, parse_chat
from .wire_responses import ResponsesStream, parse_response_id, parse_responses, response_json
from .dashboard import dashboard_routes
from .state import ServeState, authenticate

__all__ = ["create_app"]

log = logging.getLogger(__name__)
_DISCONNECT_POLL_S = 0.1


def _error(exc: RequestError) -> JSONResponse:
    return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers)


_MAX_BODY = 16 * 1024 * 1024  # a conversation's text; more is a mistake or an attack


async def _body(request: Request) -> Any:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > _MAX_BODY:
        raise RequestError(f"the request body is larger than {_MAX_BODY // 2**20} MiB", status=413, code="request_too_large")
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > _MAX_BODY:
            raise RequestError(f"the request body is larger than {_MAX_BODY // 2**20} MiB", status=413, code="request_too_large")
    try:
        body = json.loads(raw) if raw else None
    except RecursionError:
        raise RequestError(f"the request body nests deeper than {_MAX_DEPTH} levels", code="too_deep") from None
    except ValueError:
        raise RequestError("the request body is not valid JSON") from None
    _check_depth(body)
    lowered = raw.lower()
    if b"\\ud" in lowered or b"\\u0000" in lowered:
        # A lone surrogate cannot be stored or shown as UTF-8, nor a NUL in a PostgreSQL text
        # column: both become U+FFFD, as UTF-8 decoders do with bytes they cannot take.
        body = _scrub(body)
    return body


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return _UNSTORABLE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    return value


_UNSTORABLE = re.compile("[\ud800-\udfff\x00]")


_MAX_DEPTH = 128  # a tool schema nests a few levels; hundreds is an attack on the recursion limit


def _check_depth(body: Any) -> None:
    """A 400 for JSON nested deeper than ``_MAX_DEPTH`` (checked without recursion)."""
    stack = [(body, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > _MAX_DEPTH:
            raise RequestError(f"the request body nests deeper than {_MAX_DEPTH} levels", code="too_deep")
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values() if isinstance(v, (dict, list)))
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value if isinstance(v, (dict, list)))


def _tool_mode(state: ServeState) -> str:
    mode = state.profiles.serving.config.get("serve.tools", "both")
    return mode if mode in ("server", "client", "both") else "both"


def _client_tools(state: ServeState, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """TurnSpec fields for a request's own tools under ``serve.tools``."""
    mode = _tool_mode(state)
    if not tools or mode == "server":
        return {"client_tools": [], "own_tools": True}
    return {"client_tools": tools, "own_tools": mode == "both"}


def _profile(state: ServeState, model: str) -> Profile:
    profile = state.profiles.get(model)
    if profile is None:
        names = ", ".join(p.model_id for p in state.profiles.models())
        raise RequestError(f"the model {model!r} does not exist; this server offers: {names}", status=404,
                           code="model_not_found", param="model")  # fmt: skip
    return profile


def _admit(state: ServeState, key: ApiKey | None, spec: TurnSpec) -> Turn:
    try:
        state.limits.check(key)
        spec.meter = state.limits.meter(key)  # checked before each model call, charged by the runner
        return state.runner.admit(spec)
    except LimitExceeded as exc:
        raise exc.as_request_error() from None
    except QueueFull as exc:
        raise RequestError(f"{exc}: every worker is busy and the queue is full", status=429, code="server_busy",
                           headers={"retry-after": str(exc.retry_after)}) from None  # fmt: skip
    except ServerDraining:
        raise RequestError("the server is shutting down; retry on another instance", status=503,
                           code="server_shutting_down", headers={"retry-after": "1"}) from None  # fmt: skip


async def _finish(state: ServeState, key: ApiKey | None, turn: Turn, request: Request) -> Any:
    """Wait for a non-streamed turn, interrupting it when the client goes away."""
    waiter = asyncio.ensure_future(turn.wait())
    while not waiter.done():
        done, _ = await asyncio.wait({waiter}, timeout=_DISCONNECT_POLL_S)
        if not done and await request.is_disconnected():
            log.info("client disconnected; interrupting its turn")
            turn.interrupt()
            with contextlib.suppress(BaseException):
                await waiter
            raise RequestError("the client disconnected", status=499, code="client_disconnected")
    try:
        outcome = await waiter
    except RequestError:
        raise
    except Exception as exc:  # the agent could not be built or run: one line, in OpenAI's shape
        raise _turn_error(exc) from None
    _raise_for_result(outcome.result, state, turn)
    return outcome


def _turn_error(exc: BaseException) -> RequestError:
    """A turn that raised: 502 when hermes explains it (keys, config, provider), else 500."""
    from hermes.kernel.errors import HermesError

    known = isinstance(exc, HermesError)
    return RequestError(f"the turn failed: {exc}", status=502 if known else 500,
                        code="upstream_failed" if known else "server_error")  # fmt: skip


def _raise_for_result(result: dict[str, Any], state: ServeState, turn: Turn) -> None:
    from hermes.kernel.agent.factory import describe_result

    refused = turn.spec.meter.refused if turn.spec.meter is not None else None
    if result.get("failed") and refused is not None:  # a limit stopped the turn before a model call
        raise refused.as_request_error()
    if result.get("failed"):
        raise RequestError(describe_result(result), status=502, code="upstream_failed")
    if result.get("interrupted") and state.runner.draining:
        raise RequestError("the server shut down during the turn; what was done is saved, send the message again",
                           status=503, code="server_shutting_down", headers={"retry-after": "1"})  # fmt: skip


def _stream(state: ServeState, key: ApiKey | None, turn: Turn, render: Any, on_error: Callable[[str, str], bytes]) -> StreamingResponse:
    async def body() -> AsyncIterator[bytes]:
        finished = False
        try:
            yield render.start()
            while True:
                item = await turn.events.get()
                if not hasattr(item, "kind"):
                    break
                chunk = render.event(item)
                if chunk:
                    yield chunk
            finished = True
            if turn.error is not None:
                failure = _turn_error(turn.error)
                yield on_error(str(failure), failure.code or "server_error")
                return
            assert turn.outcome is not None
            try:
                _raise_for_result(turn.outcome.result, state, turn)
            except RequestError as exc:
                yield on_error(str(exc), exc.code or "error")
                return
            yield render.end(turn.outcome)
        finally:
            if not finished:  # the client went away mid-stream (the generator was cancelled)
                log.info("client disconnected from a stream; interrupting its turn")
                turn.interrupt()

    return StreamingResponse(body(), media_type="text/event-stream", headers={"cache-control": "no-cache"})


# --- routes -------------------------------------------------------------------------


async def health(request: Request) -> Response:
    state: ServeState = request.app.state.serve
    runner = state.runner
    return JSONResponse({"status": "draining" if runner.draining else "ok", "version": __version__,
                         "pending_turns": runner.pending, "max_concurrent": state.settings.max_concurrent})  # fmt: skip


async def models(request: Request) -> Response:
    state: ServeState = request.app.state.serve
    try:
        authenticate(state, request)
    except RequestError as exc:
        return _error(exc)
    data = [{"id": p.model_id, "object": "model", "created": int(p.created), "owned_by": "hermes",
             "profile": p.name, "model": str(p.config.get("model.name", "") or "")}
            for p in state.profiles.models()]  # fmt: skip
    return JSONResponse({"object": "list", "data": data})


async def chat_completions(request: Request) -> Response:
    state: ServeState = request.app.state.serve
    try:
        key = authenticate(state, request)
        parsed = parse_chat(await _body(request))
        profile = _profile(state, parsed.model)
        spec = TurnSpec(profile, parsed.message, history=parsed.history, system=parsed.system,
                        end_after="completed", key_name=key.name if key else None, tool_results=parsed.tool_results,
                        scope=Scope.of(key),
                        options=parsed.options, **_client_tools(state, parsed.tools))  # fmt: skip
        turn = _admit(state, key, spec)
        model = parsed.model or profile.model_id
        if parsed.stream:
            return _stream(state, key, turn, ChatStream(model, parsed.include_usage),
                           lambda message, code: ChatStream.error(error_body(500, message, code=code)))  # fmt: skip
        outcome = await _finish(state, key, turn, request)
        from .wire_responses import tool_items

        client = {str(c.get("id")) for c in outcome.result.get("client_tool_calls") or []}
        items = tool_items(outcome.result.get("messages") or [], len(parsed.history) + len(parsed.tool_results), client)
        tools = [{"name": i["name"], "arguments": i["arguments"], "output": i["output"]} for i in items if i["type"] == "mcp_call"]
        return JSONResponse(chat_json(model, outcome, tools))
    except RequestError as exc:
        return _error(exc)


def _responses_spec(state: ServeState, profile: Profile, parsed: Any, key: ApiKey | None) -> tuple[TurnSpec, int]:
    """The turn a Responses request asks for, and the index its input starts at (which names the response).

    The response id is fixed here, before the turn runs: the session it lands in is
    known (a new session's id is chosen now) and so is where its input starts.
    """
    from hermes.kernel.agent.history import repair_history
    from hermes.kernel.store import new_session_id
    from .wire_responses import check_results, response_id

    name = key.name if key else None
    scope = Scope.of(key)
    tools = _client_tools(state, parsed.tools)
    common = {"key_name": name, "options": parsed.options, "scope": scope, **tools}
    store = state.store(profile)
    existing = store.get_session(parsed.conversation) if parsed.conversation else None
    if existing is not None and not scope.sees(existing):
        # Another tenant's conversation: refused as OpenAI refuses an unknown one, nothing of it told.
        raise RequestError(f"conversation {parsed.conversation!r} not found", status=404,
                           code="conversation_not_found", param="conversation")  # fmt: skip
    if parsed.previous or existing is not None:
        if parsed.previous:
            found = parse_response_id(parsed.previous)
            if found is None or not scope.sees(store.get_session(found[0])):
                raise RequestError(f"previous response {parsed.previous!r} not found", status=404,
                                   code="previous_response_not_found", param="previous_response_id")  # fmt: skip
            session_id, number, starts = found
            stored = store.get_messages(session_id)
            if starts:  # the response ends where the next user message starts (or at the tip)
                later = [i for i, m in enumerate(stored) if i > number and m.get("role") == "user"]
                count = later[0] if later else None
            else:
                count = number if number < len(stored) else None
        else:
            session_id, count = parsed.conversation, None
        if count is None:
            tip = store.resume(session_id)
            before = tip.messages
            session_id = tip.session["id"]
            results = check_results(parsed.tool_results, before)
            spec = TurnSpec(profile, parsed.message, session_id=session_id, tool_results=results, **common)
            parsed.id = response_id(len(before), session_id)
            return spec, len(before)
        before = stored[:count]
        results = check_results(parsed.tool_results, before)
        branch = new_session_id()
        spec = TurnSpec(profile, parsed.message, session_id=session_id, continue_at=count, tool_results=results,
                        branch_id=branch, **common)  # fmt: skip
        parsed.id = response_id(count, branch)
        return spec, count
    results = check_results(parsed.tool_results, parsed.history)
    # The runner repairs history and results together; the input starts where the results (or the message) go.
    start = len(repair_history(parsed.history + results)) - len(results)
    new_id = parsed.conversation or new_session_id()
    spec = TurnSpec(profile, parsed.message, new_id=new_id, history=parsed.history, system=parsed.instructions,
                    tool_results=results, **common)  # fmt: skip
    parsed.id = response_id(start, new_id)
    return spec, start


async def responses(request: Request) -> Response:
    state: ServeState = request.app.state.serve
    try:
        key = authenticate(state, request)
        parsed = parse_responses(await _body(request))
        profile = _profile(state, parsed.model)
        parsed.model = parsed.model or profile.model_id
        spec, before = _responses_spec(state, profile, parsed, key)
        turn = _admit(state, key, spec)
        if parsed.stream:
            render = ResponsesStream(parsed, parsed.conversation)
            return _stream(state, key, turn, render, render.error)
        outcome = await _finish(state, key, turn, request)
        # A repaired or branched history can shift where this turn starts; the user message marks it.
        messages = outcome.result.get("messages") or []
        start = before
        if spec.message is not None:
            start = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=before)
        return JSONResponse(response_json(parsed, outcome, start, parsed.conversation))
    except RequestError as exc:
        return _error(exc)


def create_app(home: HermesHome, *, on_shutdown: Callable[[ServeState], None] | None = None) -> Starlette:
    """The server for the profile at ``home``; ``on_shutdown`` runs when the app stops (drain)."""
    state = ServeState(home)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        if on_shutdown is not None:
            await asyncio.get_running_loop().run_in_executor(None, on_shutdown, state)
        state.close()

    routes = [
        Route("/health", health, methods=["GET"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/responses", responses, methods=["POST"]),
        *dashboard_routes(),
    ]
    from starlette.middleware import Middleware

    app = Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(GuardMiddleware, policy=state.guard)])
    app.state.serve = state
    return app
