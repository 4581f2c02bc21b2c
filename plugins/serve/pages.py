"""The dashboard's HTML: one layout, one small stylesheet, a few lines of script, all inline.

Everything the store holds is escaped before it reaches a page.
"""

from __future__ import annotations

import html
import re
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["layout", "login_page", "message_html", "session_tree", "ts"]

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#243447;color:#fff;padding:8px 16px;display:flex;gap:16px;align-items:center}
header a{color:#fff;text-decoration:none}header form{margin-left:auto}
main{padding:16px;max-width:1100px}
ul.tree{list-style:none;padding-left:18px;border-left:1px dotted #bbb}ul.tree.root{border:0;padding-left:0}
.sess{padding:2px 0}.reason{color:#777;font-size:12px}.src{font-size:11px;background:#e4e9ef;border-radius:3px;padding:0 4px}
.msg{background:#fff;border:1px solid #ddd;border-radius:4px;margin:8px 0;padding:8px}
.msg .role{font-weight:600;text-transform:uppercase;font-size:11px;color:#555}
.msg pre{white-space:pre-wrap;margin:4px 0;font:13px/1.4 ui-monospace,monospace}
.msg.tool{background:#f4f6f8}.note{border-left:4px solid #d08c2c;background:#fff8ec;padding:8px;margin:8px 0}
.hit{background:#fff;border:1px solid #ddd;padding:6px;margin:6px 0}mark{background:#ffe27a}
.chart{width:100%;max-width:660px;background:#fff;border:1px solid #ddd;margin:8px 0}
.chart-title{font-weight:600;font-size:13px}.axis{font-size:10px;fill:#555}
table{border-collapse:collapse}td,th{padding:3px 8px;border-bottom:1px solid #e4e4e4;text-align:left}
"""

# Folding tool calls and filtering the session list: the only script, no library.
_SCRIPT = """
document.addEventListener('DOMContentLoaded', function () {
  var toggle = document.getElementById('toggle-tools');
  if (toggle) {
    toggle.addEventListener('click', function () {
      var folds = document.querySelectorAll('details.tool-call');
      var open = toggle.dataset.open !== 'true';
      folds.forEach(function (d) { d.open = open; });
      toggle.dataset.open = String(open);
      toggle.textContent = open ? 'fold tool calls' : 'unfold tool calls';
    });
  }
  var filter = document.getElementById('filter');
  if (filter) {
    filter.addEventListener('input', function () {
      var text = filter.value.toLowerCase();
      document.querySelectorAll('li.sess').forEach(function (li) {
        li.style.display = li.textContent.toLowerCase().indexOf(text) >= 0 ? '' : 'none';
      });
    });
  }
  // Sign-in and sign-out post JSON: the server refuses form bodies (guard.py), which other sites can send.
  function post(path, data, form) {
    return fetch(path, {method: 'POST', credentials: 'same-origin', headers: {'content-type': 'application/json'},
                        body: JSON.stringify(data)}).then(function (r) {
      return r.json().then(function (body) {
        if (r.ok && body.redirect) { window.location.assign(body.redirect); return; }
        var out = document.getElementById('login-error');
        if (out) { out.textContent = (body.error && body.error.message) || ('error ' + r.status); }
      });
    });
  }
  var login = document.getElementById('login-form');
  if (login) {
    login.addEventListener('submit', function (ev) {
      ev.preventDefault();
      post('/login', {key: login.elements.key.value, csrf: login.elements.csrf.value});
    });
  }
  var logout = document.getElementById('logout');
  if (logout) {
    logout.addEventListener('click', function () { post('/logout', {}); });
  }
  document.body.dataset.ready = 'true';
});
"""


def ts(value: Any) -> str:
    if not value:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(value)))


_SURROGATES = re.compile("[\ud800-\udfff]")


def e(value: Any) -> str:
    """HTML-escaped text; lone surrogates (stored from a JSON ``\\ud800``) become U+FFFD, or the page could not encode."""
    return html.escape(_SURROGATES.sub("\ufffd", "" if value is None else str(value)))


def layout(title: str, body: str, *, query: str = "", logout: bool = False) -> str:
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        "<link rel='icon' href='data:,'>"  # no favicon request, so no 404 in the console
        f"<title>{e(title)} · hermes</title><style>{_STYLE}</style></head><body>"
        "<header><strong>hermes</strong><a href='/'>sessions</a><a href='/usage'>usage</a>"
        f"<form action='/search' method='get'><input id='q' name='q' value='{e(query)}' placeholder='search messages'>"
        "<button type='submit'>search</button></form>"
        + ("<button id='logout' type='button'>sign out</button>" if logout else "") + "</header>"
        f"<main><h1>{e(title)}</h1>{body}</main><script>{_SCRIPT}</script></body></html>"
    )


def login_page(error: str = "", *, csrf: str = "") -> str:
    """The sign-in form; its script posts JSON with ``csrf``, the token tied to this form's nonce cookie."""
    return layout("sign in", f"<p class='reason' id='login-error'>{e(error)}</p><form id='login-form' method='post' action='/login'>"
                  f"<input type='hidden' name='csrf' value='{e(csrf)}'><label>API key "
                  "<input type='password' name='key' autocomplete='off'></label> <button type='submit'>sign in</button></form>")  # fmt: skip


def session_tree(sessions: Sequence[Mapping[str, Any]]) -> str:
    """Sessions as nested lists: each under its parent (compression, branch), roots newest first."""
    by_id = {s["id"]: s for s in sessions}
    children: dict[str | None, list[Mapping[str, Any]]] = {}
    for session in sessions:
        parent = session.get("parent_session_id")
        children.setdefault(parent if parent in by_id else None, []).append(session)
    for group in children.values():
        group.sort(key=lambda s: (s.get("started_at") or 0, s["id"]))
    roots = sorted(children.get(None, []), key=lambda s: (s.get("started_at") or 0), reverse=True)

    def render(items: Sequence[Mapping[str, Any]], root: bool = False) -> str:
        out = [f"<ul class='tree{' root' if root else ''}'>"]
        for s in items:
            ended = f" <span class='reason'>ended: {e(s.get('end_reason'))}</span>" if s.get("end_reason") else ""
            title = f" — {e(s['title'])}" if s.get("title") else ""
            out.append(
                f"<li class='sess' data-session='{e(s['id'])}'><a href='/session/{e(s['id'])}'>{e(s['id'])}</a>{title} "
                f"<span class='src'>{e(s.get('source'))}</span> <span class='reason'>{e(ts(s.get('started_at')))} · "
                f"{s.get('message_count') or 0} messages · {e(s.get('model'))}</span>{ended}"
                + render(children.get(s["id"], [])) + "</li>"
            )
        return "".join(out) + "</ul>" if len(out) > 1 else ""

    return render(roots, root=True) or "<p>no sessions yet</p>"


def _text(content: Any) -> str:
    if content is None:  # an assistant message that only calls tools: its calls render below
        return ""
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False, indent=1)


def message_html(message: Mapping[str, Any], note: bool = False) -> str:
    """One message; tool calls and tool results fold into ``<details>``."""
    role = str(message.get("role"))
    anchor = f"m{message.get('id')}"
    parts = [f"<div class='msg {e(role)}{' note' if note else ''}' id='{e(anchor)}'><div class='role'>{e(role)}"
             f"{' · compression note' if note else ''} <span class='reason'>{e(ts(message.get('timestamp')))}</span></div>"]  # fmt: skip
    content = _text(message.get("content"))
    if role == "tool":
        name = message.get("tool_name") or "tool"
        parts.append(f"<details class='tool-call'><summary>result of {e(name)} ({len(content):,} chars)</summary>"
                     f"<pre>{e(content)}</pre></details>")  # fmt: skip
    elif content:
        parts.append(f"<pre>{e(content)}</pre>")
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        parts.append(f"<details class='tool-call'><summary>calls {e(function.get('name'))}</summary>"
                     f"<pre>{e(function.get('arguments'))}</pre></details>")  # fmt: skip
    return "".join(parts) + "</div>"
