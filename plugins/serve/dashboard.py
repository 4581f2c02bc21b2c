"""The read-only dashboard: sessions as lineage trees, search, one session, usage charts.

Same keys as the API: a bearer header, or the session cookie set by signing
in with a key at ``/login`` (cookies.py: signed with the server secret, ended
by ``/logout``, expiry or the key's removal). Without keys (loopback only) it
is open; guard.py keeps other sites' pages and rebound names out either way.
Reads go through the session store's public methods only, so any store
backend works.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from hermes.kernel.redact import redact_data, redact_snippet
from .charts import bar_chart, usage_by
from .errors import RequestError, error_body
from .cookies import LOGIN_COOKIE, LOGIN_FORM_TTL, SESSION_COOKIE
from .guard import request_view
from .keys import match_key
from .pages import layout, login_page, message_html, session_tree, ts
from .state import authenticate
from .tenants import Scope

__all__ = ["compaction_record", "compression_notes", "dashboard_routes", "fidelity_html"]

_SESSION_LIMIT = 500
_SECURITY_HEADERS = {
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


def _state(request: Request) -> Any:
    return request.app.state.serve


def _page(title: str, body: str, status: int = 200, query: str = "") -> HTMLResponse:
    return HTMLResponse(layout(title, body, query=query, logout=True), status_code=status, headers=_SECURITY_HEADERS)


def _signed_in(request: Request) -> Scope | None:
    """The scope of the signed-in key (tenants.py), or None when nobody is signed in."""
    try:
        return Scope.of(authenticate(_state(request), request, cookie=True))
    except RequestError:
        return None


def _guard(handler: Any) -> Any:
    # Plain functions: Starlette runs them in its thread pool, so store reads never block the event loop.
    def guarded(request: Request) -> Response:
        scope = _signed_in(request)
        if scope is None:
            return RedirectResponse("/login", status_code=303)
        request.state.scope = scope  # every page reads only what this key's tenant may see
        return handler(request)

    return guarded


def _scope(request: Request) -> Scope:
    return request.state.scope


def _secure(request: Request) -> bool:
    """Over TLS, or behind a trusted proxy that says the client used https: the cookie gets ``Secure``."""
    view = request_view(request.scope)
    return bool(view and view.secure) or request.url.scheme == "https"


def _refuse(status: int, message: str, code: str) -> JSONResponse:
    return JSONResponse(error_body(status, message, code=code), status_code=status, headers={"cache-control": "no-store"})


async def login(request: Request) -> Response:
    """GET: the form, with a CSRF token tied to a nonce cookie. POST (JSON ``{key, csrf}``): a new session."""
    state = _state(request)
    secure = _secure(request)
    if request.method == "GET":
        nonce, token = state.sessions.login_form()
        page = HTMLResponse(login_page(csrf=token), headers=_SECURITY_HEADERS)
        page.set_cookie(LOGIN_COOKIE, nonce, max_age=LOGIN_FORM_TTL, path="/login", httponly=True,
                        samesite="strict", secure=secure)  # fmt: skip
        return page
    try:
        form = json.loads(await request.body() or b"null")
    except ValueError:
        form = None
    if not isinstance(form, dict):
        return _refuse(400, "send JSON: {\"key\": \"hk-...\", \"csrf\": \"<the login form's token>\"}", "invalid_request")
    if not state.sessions.csrf_ok(request.cookies.get(LOGIN_COOKIE), form.get("csrf")):
        return _refuse(403, "the sign-in form's CSRF token is missing, wrong or expired; reload /login and sign in again",
                       "csrf_failed")  # fmt: skip
    presented = form.get("key")
    key = match_key(state.keys, presented.strip() if isinstance(presented, str) else None)
    if key is None:
        return _refuse(401, "that key is not valid; create one with `hermes serve key add NAME`", "invalid_api_key")
    # Whatever cookie came in (a planted one included) is replaced: every sign-in is a new session.
    state.sessions.sign_out(request.cookies.get(SESSION_COOKIE))
    value, max_age = state.sessions.sign_in(key)
    response = JSONResponse({"signed_in": key.name, "redirect": "/"}, headers={"cache-control": "no-store"})
    response.set_cookie(SESSION_COOKIE, value, max_age=max_age, path="/", httponly=True, samesite="strict", secure=secure)
    response.delete_cookie(LOGIN_COOKIE, path="/login", httponly=True, samesite="strict", secure=secure)
    return response


async def logout(request: Request) -> Response:
    """End the session server-side (its record is deleted, so the cookie is dead everywhere) and clear the cookie."""
    ended = _state(request).sessions.sign_out(request.cookies.get(SESSION_COOKIE))
    response = JSONResponse({"signed_out": ended, "redirect": "/login"}, headers={"cache-control": "no-store"})
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict", secure=_secure(request))
    return response


def _page_number(request: Request) -> int:
    raw = request.query_params.get("page", "1")
    return int(raw) if raw.isdigit() and 0 < int(raw) <= 1_000_000 else 1


def sessions_page(request: Request) -> Response:
    store = _state(request).store()
    number = _page_number(request)
    # One more than a page tells whether a next page exists without counting the table.
    rows = store.list_sessions(limit=_SESSION_LIMIT + 1, offset=(number - 1) * _SESSION_LIMIT, tenant=_scope(request).reads)
    sessions = redact_data(rows[:_SESSION_LIMIT])  # titles can hold a pasted key
    links = []
    if number > 1:
        links.append(f"<a id='newer' href='/?page={number - 1}'>newer</a>")
    if len(rows) > _SESSION_LIMIT:
        links.append(f"<a id='older' href='/?page={number + 1}'>older</a>")
    first = (number - 1) * _SESSION_LIMIT
    shown = f"sessions {first + 1}–{first + len(sessions)}" if sessions else "no sessions"
    body = ("<p><input id='filter' placeholder='filter sessions'> "
            f"<span class='reason'>{shown}, newest lineage first</span> {' · '.join(links)}</p>" + session_tree(sessions))  # fmt: skip
    return _page("sessions", body)


def _snippet(text: str) -> str:
    # The store marks matches with **…**; escape first, then turn the marks into <mark>.
    return re.sub(r"\*\*(.+?)\*\*", r"<mark>\1</mark>", html.escape(text))


def search_page(request: Request) -> Response:
    query = request.query_params.get("q", "").strip()
    if not query:
        return _page("search", "<p>type words to find in every stored message (compressed sessions included)</p>")
    hits = _state(request).store().search(query, limit=50, context=False, tenant=_scope(request).reads)
    rows = [f"<div class='hit'><a href='/session/{html.escape(h.session_id)}#m{h.message_id}'>{html.escape(h.session_id)}</a> "
            f"<span class='reason'>{html.escape(h.role)} · {html.escape(ts(h.timestamp))}</span><div>{_snippet(redact_snippet(h.snippet))}</div></div>"
            for h in hits]  # fmt: skip
    summary = f"<p class='reason' id='hit-count'>{len(hits)} match(es) for “{html.escape(query)}”</p>"
    return _page("search", summary + "".join(rows), query=query)


def compression_notes(store: Any, session: dict[str, Any], messages: list[dict[str, Any]]) -> list[int]:
    """Ids of the messages a compression wrote into ``session`` (its summary): present at creation, absent in the parent."""
    parent_id = session.get("parent_session_id")
    parent = store.get_session(parent_id) if parent_id else None
    if parent is None or parent.get("end_reason") != "compression":
        return []
    seen = {str(m.get("content")) for m in store.get_messages(parent_id)}
    created = float(session.get("started_at") or 0) + 1.0
    return [int(m["id"]) for m in messages if float(m.get("timestamp") or 0) <= created and str(m.get("content")) not in seen]


def compaction_record(store: Any, session_id: str) -> dict[str, Any] | None:
    """The compression record that created (else ended) the session; None when the store keeps none."""
    read = getattr(store, "compaction", None)  # a store backend without compaction records still shows the page
    return redact_data(read(session_id)) if callable(read) else None


def fidelity_html(record: dict[str, Any] | None) -> str:
    """``fidelity 0.83 · missing: … · note edited in review`` for one compression record."""
    if record is None:
        return "<span class='fidelity' data-fidelity=''>fidelity: not recorded</span>"
    score = record.get("fidelity")
    if score is None:
        text = f"fidelity: not scored by {html.escape(str(record.get('engine') or 'the engine'))}"
    else:
        text = f"fidelity {float(score):.2f}"
    missing = [str(m) for m in record.get("missing") or []]
    text += " · missing: " + (", ".join(html.escape(m) for m in missing) if missing else "nothing")
    text += " · note edited in review" if record.get("edited") else " · note not edited"
    value = "" if score is None else f"{float(score):.2f}"
    return f"<span class='fidelity' data-fidelity='{value}'>{text}</span>"


def session_page(request: Request) -> Response:
    store = _state(request).store()
    session_id = request.path_params["session_id"]
    scope = _scope(request)
    found = store.get_session(session_id)
    if not scope.sees(found):  # another tenant's session is exactly as absent as a missing one
        return _page("not found", f"<p>no session {html.escape(session_id)}</p>", status=404)
    session = redact_data(found)
    # Whatever was stored (a user message with a key in it), the page never shows a secret.
    messages = redact_data(store.get_messages(session_id))
    parent_row = store.get_session(session.get("parent_session_id")) if session.get("parent_session_id") else None
    notes = set(compression_notes(store, session, messages)) if scope.sees(parent_row) else set()
    lineage = store.lineage(session_id)
    for side in ("ancestors", "children"):  # a branch another tenant made from here is not named
        lineage[side] = [item for item in lineage[side] if scope.sees(store.get_session(item["id"]))]
    chain = " ← ".join(f"<a href='/session/{html.escape(a['id'])}'>{html.escape(a['id'])}</a> "
                       f"<span class='reason'>({html.escape(str(a['end_reason']))})</span>" for a in lineage["ancestors"])  # fmt: skip
    kids = ", ".join(f"<a href='/session/{html.escape(c['id'])}'>{html.escape(c['id'])}</a>" for c in lineage["children"])
    cost = session.get("estimated_cost_usd")
    facts = [
        f"source <span class='src'>{html.escape(str(session.get('source')))}</span> · model {html.escape(str(session.get('model')))}",
        f"started {ts(session.get('started_at'))}" + (f" · ended {ts(session.get('ended_at'))} ({html.escape(str(session.get('end_reason')))})" if session.get("ended_at") else " · open"),
        f"tokens in {session.get('input_tokens') or 0:,} / out {session.get('output_tokens') or 0:,}"
        + (f" · cost ${cost:.4f}" if cost else "") + f" · {session.get('api_call_count') or 0} API calls",
    ]  # fmt: skip
    if session.get("tenant"):
        facts.append(f"tenant <span class='tenant'>{html.escape(str(session['tenant']))}</span>")
    if chain:
        facts.append(f"continues: {chain}")
    if kids:
        facts.append(f"continued by: {kids}")
    record = compaction_record(store, session_id)
    if record and not all(scope.sees(store.get_session(record.get(k))) for k in ("session_id", "parent_session_id") if record.get(k)):
        record = None
    if notes:
        parent = store.get_session(session.get("parent_session_id"))
        created = record if record and record.get("session_id") == session_id else None
        facts.append(f"<span class='note'>compressed from {html.escape(str(parent['id']))} "
                     f"({parent.get('message_count') or 0} messages → {len(messages)}); "
                     f"{len(notes)} compression note(s) below; {fidelity_html(created)}</span>")  # fmt: skip
    if record and record.get("parent_session_id") == session_id:
        child = html.escape(str(record.get("session_id")))
        facts.append(f"<span class='note'>compressed into <a href='/session/{child}'>{child}</a>; {fidelity_html(record)}</span>")
    body = "".join(f"<p>{fact}</p>" for fact in facts)
    body += "<p><button id='toggle-tools' type='button'>unfold tool calls</button></p>"
    body += "".join(message_html(m, note=int(m["id"]) in notes) for m in messages) or "<p>no messages</p>"
    return _page(f"session {session_id}", body)


def usage_page(request: Request) -> Response:
    sessions = _state(request).store().list_sessions(limit=None, tenant=_scope(request).reads)
    by_day, by_model = usage_by(sessions, "day"), usage_by(sessions, "model")
    charts = [
        bar_chart("tokens per day", by_day, ("input", "output"), chart_id="tokens-per-day"),
        bar_chart("cost per day (USD)", by_day, ("cost",), money=True, chart_id="cost-per-day"),
        bar_chart("tokens per model", by_model, ("input", "output"), chart_id="tokens-per-model"),
        bar_chart("cost per model (USD)", by_model, ("cost",), money=True, chart_id="cost-per-model"),
    ]
    rows = "".join(f"<tr><td>{html.escape(m)}</td><td>{v['input']:,.0f}</td><td>{v['output']:,.0f}</td><td>${v['cost']:.4f}</td></tr>"
                   for m, v in by_model.items())  # fmt: skip
    table = f"<table><tr><th>model</th><th>tokens in</th><th>tokens out</th><th>cost</th></tr>{rows}</table>"
    return _page("usage", "".join(charts) + table)


def dashboard_routes() -> list[Route]:
    return [
        Route("/", _guard(sessions_page), methods=["GET"]),
        Route("/login", login, methods=["GET", "POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/search", _guard(search_page), methods=["GET"]),
        Route("/session/{session_id:str}", _guard(session_page), methods=["GET"]),
        Route("/usage", _guard(usage_page), methods=["GET"]),
    ]
