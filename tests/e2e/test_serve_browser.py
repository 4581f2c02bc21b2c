"""Browser safety and dashboard cookies of ``hermes serve``, through the wire against the server in a subprocess.

Every refusal is checked for its status, its OpenAI-shaped error naming the
setting that allows it, that the model got no request and nothing was
written, and that the server still answers a well-formed request after it.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import re
import stat
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from tests.e2e.serve_process import ServeProcess, db_rows, serve_env

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

EVIL = "http://evil.example:8000"
CHAT = json.dumps({"model": "hermes", "messages": [{"role": "user", "content": "write the file"}]})


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


@pytest.fixture
def serve(fake_model_server: FakeModelServer, hermes_home: Path, workspace: Path):
    started: list[ServeProcess] = []

    def start(**settings: Any) -> ServeProcess:
        settings.setdefault("workspace", str(workspace))
        process = ServeProcess(serve_env(fake_model_server, hermes_home, **settings))
        started.append(process)
        return process

    yield start
    for process in started:
        process.__exit__()


class Reply:
    def __init__(self, status: int, headers: http.client.HTTPMessage, body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def cookies(self) -> dict[str, str]:
        """Set-Cookie lines by cookie name (the whole line, attributes included)."""
        return {line.split("=", 1)[0]: line for line in self.headers.get_all("set-cookie") or []}


def call(server: ServeProcess, method: str, path: str, body: bytes | str | None = None, **headers: str) -> Reply:
    """One request with exactly these headers (``host`` too: a forged one is the point)."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        data = body.encode() if isinstance(body, str) else body
        connection.putrequest(method, path, skip_host="host" in headers, skip_accept_encoding=True)
        for name, value in headers.items():
            connection.putheader(name.replace("_", "-"), value)
        if data is not None:
            connection.putheader("content-length", str(len(data)))
        connection.endheaders(data)
        response = connection.getresponse()
        return Reply(response.status, response.headers, response.read())
    finally:
        connection.close()


def assert_refused(reply: Reply, status: int, code: str, names: str) -> None:
    assert reply.status == status, reply.text
    error = reply.json()["error"]
    assert error["code"] == code and names in error["message"], error
    assert set(error) == {"message", "type", "param", "code"}


def script_a_file_write(fake: FakeModelServer) -> None:
    # What the page's turn would do if it ran: write a file into the workspace.
    fake.tool_calls(("write_file", {"path": "pwned.txt", "content": "owned"}))
    fake.reply("written")


def api_sessions(home: Path) -> int:
    return db_rows(home, "SELECT COUNT(*) FROM sessions WHERE source = 'api'")[0][0] if (home / "state.db").exists() else 0


def nothing_ran(fake: FakeModelServer, workspace: Path, home: Path, before: int = 0) -> None:
    assert fake.requests == [], "the model was called"
    assert not (workspace / "pwned.txt").exists()
    assert api_sessions(home) == before, "a session was stored"


def attacks(server: ServeProcess, auth: dict[str, str]) -> None:
    """The cross-origin posts a web page can make, each refused with the right status and code."""
    origin = {"origin": EVIL, "sec_fetch_site": "cross-site", "sec_fetch_mode": "no-cors"}
    for path in ("/v1/chat/completions", "/v1/responses"):
        # no-cors fetch or a form: text/plain, urlencoded and multipart go out without a preflight.
        assert_refused(call(server, "POST", path, CHAT, content_type="text/plain;charset=UTF-8", **origin, **auth),
                       403, "origin_not_allowed", "serve.allowed_origins")  # fmt: skip
        assert_refused(call(server, "POST", path, "a=1", content_type="application/x-www-form-urlencoded", **origin, **auth),
                       403, "origin_not_allowed", "serve.allowed_origins")  # fmt: skip
        # The same bodies without Origin (an old browser, a form from a file): refused by their type.
        assert_refused(call(server, "POST", path, CHAT, content_type="text/plain", **auth),
                       415, "unsupported_media_type", "application/json")  # fmt: skip
        assert_refused(call(server, "POST", path, "a=1", content_type="application/x-www-form-urlencoded", **auth),
                       415, "unsupported_media_type", "application/json")  # fmt: skip
        multipart = "--b\r\nContent-Disposition: form-data; name=\"m\"\r\n\r\nx\r\n--b--\r\n"
        assert_refused(call(server, "POST", path, multipart, content_type="multipart/form-data; boundary=b", **auth),
                       415, "unsupported_media_type", "application/json")  # fmt: skip
        assert_refused(call(server, "POST", path, CHAT, **auth), 415, "unsupported_media_type", "application/json")
        # JSON with a foreign Origin (a CORS request the browser would preflight, or a non-browser lying).
        assert_refused(call(server, "POST", path, CHAT, content_type="application/json", origin=EVIL, **auth),
                       403, "origin_not_allowed", "serve.allowed_origins")  # fmt: skip
        assert_refused(call(server, "POST", path, CHAT, content_type="application/json", sec_fetch_site="same-site", **auth),
                       403, "origin_not_allowed", "Sec-Fetch-Site")  # fmt: skip
        assert_refused(call(server, "POST", path, CHAT, content_type="application/json", origin="null", **auth),
                       403, "origin_not_allowed", "serve.allowed_origins")  # fmt: skip
    # The preflight a JSON fetch from the page needs gets no CORS grant.
    preflight = call(server, "OPTIONS", "/v1/chat/completions", origin=EVIL, access_control_request_method="POST",
                     access_control_request_headers="content-type")  # fmt: skip
    assert "access-control-allow-origin" not in {k.lower() for k in preflight.headers.keys()}


def test_cross_origin_posts_without_keys_run_nothing(serve, fake_model_server: FakeModelServer, workspace: Path, hermes_home: Path) -> None:
    script_a_file_write(fake_model_server)
    server = serve()
    attacks(server, {})
    nothing_ran(fake_model_server, workspace, hermes_home)
    # The server's own pages and non-browser clients still work: same-origin JSON runs the turn.
    same = call(server, "POST", "/v1/chat/completions", CHAT, content_type="application/json",
                origin=server.url, sec_fetch_site="same-origin")  # fmt: skip
    assert same.status == 200 and same.json()["choices"][0]["message"]["content"] == "written", same.text
    assert (workspace / "pwned.txt").read_text() == "owned"  # the control: the scripted turn does write


def test_cross_origin_posts_with_a_key_run_nothing(serve, hermes, fake_model_server: FakeModelServer, workspace: Path,
                                                   hermes_home: Path) -> None:  # fmt: skip
    key = hermes("serve", "key", "add", "app").stdout.strip()
    script_a_file_write(fake_model_server)
    server = serve()
    attacks(server, {"authorization": f"Bearer {key}"})
    nothing_ran(fake_model_server, workspace, hermes_home)
    assert server.client(api_key=key).chat.completions.create(
        model="hermes", messages=[{"role": "user", "content": "go"}]).choices[0].message.content == "written"  # fmt: skip


def test_an_allowed_origin_may_call_the_api_with_cors_but_no_credentials(serve, fake_model_server: FakeModelServer) -> None:
    fake_model_server.reply("hello app")
    server = serve(allowed_origins='["https://app.example"]')
    preflight = call(server, "OPTIONS", "/v1/chat/completions", origin="https://app.example",
                     access_control_request_method="POST", access_control_request_headers="content-type,authorization")  # fmt: skip
    assert preflight.status == 204 and preflight.headers["access-control-allow-origin"] == "https://app.example"
    ok = call(server, "POST", "/v1/chat/completions", CHAT, content_type="application/json",
              origin="https://app.example", sec_fetch_site="cross-site")  # fmt: skip
    assert ok.status == 200 and ok.json()["choices"][0]["message"]["content"] == "hello app"
    assert ok.headers["access-control-allow-origin"] == "https://app.example"
    assert ok.headers.get("access-control-allow-credentials") is None
    assert_refused(call(server, "POST", "/v1/chat/completions", CHAT, content_type="application/json", origin=EVIL),
                   403, "origin_not_allowed", "serve.allowed_origins")  # fmt: skip


def test_a_forged_host_gets_nothing_and_forwarded_headers_need_trust_proxy(serve, fake_model_server: FakeModelServer,
                                                                            hermes_home: Path) -> None:  # fmt: skip
    from tests.e2e.test_serve_dashboard import UNIQUE, seed

    seed(hermes_home)
    server = serve()
    own = f"127.0.0.1:{server.port}"
    for host in (f"rebind.example:{server.port}", "rebind.example", f"127.0.0.1:{server.port + 1}", ""):
        for path in ("/", "/search?q=" + UNIQUE, "/v1/models", "/login"):
            reply = call(server, "GET", path, host=host)
            assert_refused(reply, 403, "host_not_allowed", "serve.allowed_hosts")
            assert UNIQUE not in reply.text
        assert_refused(call(server, "POST", "/v1/chat/completions", CHAT, host=host, content_type="application/json"),
                       403, "host_not_allowed", "serve.allowed_hosts")  # fmt: skip
    for host in (own, f"localhost:{server.port}"):
        assert call(server, "GET", "/search?q=" + UNIQUE, host=host).status == 200
    # Without trust_proxy the X-Forwarded-* headers are ignored: they neither open a name nor claim TLS.
    assert_refused(call(server, "GET", "/", host="rebind.example", x_forwarded_host=own), 403, "host_not_allowed", "Host")
    login = call(server, "GET", "/login", host=own, x_forwarded_host="rebind.example", x_forwarded_proto="https")
    assert login.status == 200 and "secure" not in login.cookies()["hermes_login"].lower()
    # The same origin judged by the real Host: an Origin matching the forged X-Forwarded-Host is foreign.
    assert_refused(call(server, "POST", "/v1/chat/completions", CHAT, host=own, content_type="application/json",
                        origin="https://rebind.example", x_forwarded_host="rebind.example", x_forwarded_proto="https"),
                   403, "origin_not_allowed", "serve.allowed_origins")  # fmt: skip
    assert fake_model_server.requests == []
    server.terminate()
    proxied = serve(trust_proxy="true", allowed_hosts='["hermes.corp.example"]')
    own = f"127.0.0.1:{proxied.port}"
    via = {"host": own, "x_forwarded_host": "hermes.corp.example", "x_forwarded_proto": "https"}
    login = call(proxied, "GET", "/login", **via)
    assert login.status == 200 and "secure" in login.cookies()["hermes_login"].lower()
    assert_refused(call(proxied, "GET", "/", host=own, x_forwarded_host="rebind.example"), 403, "host_not_allowed",
                   "X-Forwarded-Host")  # fmt: skip
    assert call(proxied, "GET", "/search?q=" + UNIQUE, host="hermes.corp.example").status == 200  # a listed name


class Browser:
    """A cookie-keeping client of the dashboard over http.client: sign-in the way the login page's script does."""

    def __init__(self, server: ServeProcess) -> None:
        self.server = server
        self.jar: dict[str, str] = {}

    def send(self, method: str, path: str, body: Any = None, **headers: str) -> Reply:
        if self.jar:
            headers.setdefault("cookie", "; ".join(f"{k}={v}" for k, v in self.jar.items()))
        data = json.dumps(body) if body is not None else None
        if data is not None:
            headers.setdefault("content_type", "application/json")
        reply = call(self.server, method, path, data, **headers)
        for name, line in reply.cookies().items():
            value = line.split("=", 1)[1].split(";", 1)[0].strip('"')
            if value and "max-age=0" not in line.lower():
                self.jar[name] = value
            else:
                self.jar.pop(name, None)
        return reply

    def csrf(self) -> str:
        page = self.send("GET", "/login")
        assert page.status == 200
        return re.search(r"name='csrf' value='([^']+)'", page.text).group(1)

    def sign_in(self, key: str) -> Reply:
        return self.send("POST", "/login", {"key": key, "csrf": self.csrf()})

    def opens(self, path: str = "/usage") -> bool:
        reply = self.send("GET", path)
        assert reply.status in (200, 303), reply.text
        return reply.status == 200


def test_login_needs_its_csrf_token_and_sets_strict_httponly_cookies(serve, hermes, hermes_home: Path) -> None:
    key = hermes("serve", "key", "add", "viewer").stdout.strip()
    server = serve()
    browser = Browser(server)
    assert not browser.opens()
    assert_refused(browser.send("POST", "/login", {"key": key}), 403, "csrf_failed", "CSRF")
    browser.csrf()
    assert_refused(browser.send("POST", "/login", {"key": key, "csrf": "forged"}), 403, "csrf_failed", "CSRF")
    # A token from a form another browser loaded, without that browser's nonce cookie.
    stolen = Browser(server).csrf()
    fresh = Browser(server)
    assert_refused(fresh.send("POST", "/login", {"key": key, "csrf": stolen}), 403, "csrf_failed", "CSRF")
    # A login forged by another site: form-encoded, or JSON with its Origin.
    token = browser.csrf()
    assert_refused(browser.send("POST", "/login", None, content_type="application/x-www-form-urlencoded"),
                   415, "unsupported_media_type", "application/json")  # fmt: skip
    assert_refused(browser.send("POST", "/login", {"key": key, "csrf": token}, origin=EVIL), 403, "origin_not_allowed",
                   "serve.allowed_origins")  # fmt: skip
    assert "hermes_session" not in browser.jar and not browser.opens()
    assert_refused(browser.sign_in("hk-wrong"), 401, "invalid_api_key", "not valid")
    signed = browser.sign_in(key)
    assert signed.status == 200 and signed.json()["signed_in"] == "viewer"
    line = signed.cookies()["hermes_session"].lower()
    assert "httponly" in line and "samesite=strict" in line and "secure" not in line and "max-age=43200" in line
    assert key not in line and browser.opens() and browser.opens("/")
    hashes = [k["sha256"] for k in yaml.safe_load((hermes_home / "config.yaml").read_text())["serve"]["api_keys"]]
    assert not any(h in line for h in hashes)
    secret = hermes_home / "serve_secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert secret.read_text().strip() not in server.stderr


def test_cookies_are_new_each_sign_in_and_die_on_logout_forgery_and_removal(serve, hermes, hermes_home: Path) -> None:
    key = hermes("serve", "key", "add", "viewer").stdout.strip()
    server = serve()
    first, second = Browser(server), Browser(server)
    first.sign_in(key)
    second.sign_in(key)
    assert first.jar["hermes_session"] != second.jar["hermes_session"] and first.opens() and second.opens()
    # Forged from the config's hash, the way the old code derived it: refused.
    sha = yaml.safe_load((hermes_home / "config.yaml").read_text())["serve"]["api_keys"][0]["sha256"]
    old = "viewer." + hmac.new(bytes.fromhex(sha), b"hermes-dashboard", hashlib.sha256).hexdigest()
    for forged in (old, "v1.x.9999999999.AAAA", first.jar["hermes_session"][:-3] + "AAA"):
        assert call(server, "GET", "/usage", cookie=f"hermes_session={forged}").status == 303
        assert call(server, "GET", "/usage", cookie=f"hermes_dashboard={forged}").status == 303
    # Logout ends the session server-side: the cookie replayed afterwards is refused; the other session lives.
    kept = first.jar["hermes_session"]
    assert_refused(first.send("POST", "/logout", None, content_type="text/plain"), 415, "unsupported_media_type", "application/json")
    assert first.opens()
    out = first.send("POST", "/logout", {})
    assert out.status == 200 and out.json()["signed_out"] is True and "hermes_session" not in first.jar
    assert call(server, "GET", "/usage", cookie=f"hermes_session={kept}").status == 303
    assert second.opens()
    # The cookie survives a restart (the secret and the record are in HERMES_HOME) ...
    server.terminate()
    server = serve()
    second.server = server
    assert second.opens()
    # ... and dies when its key is removed, in the running server, even if a key of that name comes back.
    removed = hermes("serve", "key", "remove", "viewer")
    assert removed.returncode == 0 and "1 dashboard session(s) ended" in removed.stdout
    assert not second.opens()
    hermes("serve", "key", "add", "viewer")
    assert not second.opens()
    assert "viewer" not in (hermes_home / "serve_sessions.json").read_text()


def test_a_session_expires_after_session_hours(serve, hermes) -> None:
    key = hermes("serve", "key", "add", "viewer").stdout.strip()
    server = serve(session_hours="0.001")  # 3.6 s
    browser = Browser(server)
    signed = browser.sign_in(key)
    assert "max-age=3" in signed.cookies()["hermes_session"].lower() and browser.opens()
    time.sleep(4.0)
    assert not browser.opens()
    assert browser.sign_in(key).status == 200 and browser.opens()  # a new sign-in works again


# --- a real browser ---------------------------------------------------------------

ATTACK_PAGE = """<!doctype html><html><head><title>attack</title></head><body>
<iframe name="sink" style="display:none"></iframe>
<form id="plain" method="post" enctype="text/plain" target="sink" action="TARGET/v1/chat/completions">
<input name='{"model":"hermes","messages":[{"role":"user","content":"write the file"}],"x":"' value='"}'></form>
<form id="urlenc" method="post" target="sink" action="TARGET/v1/responses"><input name="input" value="write the file"></form>
<pre id="out">pending</pre>
<script>
var target = "TARGET", body = JSON.stringify({model: "hermes", messages: [{role: "user", content: "write the file"}]});
var results = {};
function attempt(name, promise) {
  return promise.then(function (r) { return r.text().then(function (t) { results[name] = "read " + r.status + " " + t.slice(0, 200); }); },
                      function (e) { results[name] = "blocked"; });
}
Promise.all([
  attempt("no_cors_plain", fetch(target + "/v1/chat/completions", {method: "POST", mode: "no-cors",
          headers: {"content-type": "text/plain"}, body: body})),
  attempt("cors_json", fetch(target + "/v1/chat/completions", {method: "POST",
          headers: {"content-type": "application/json"}, body: body})),
  attempt("read_dashboard", fetch(target + "/")),
  attempt("read_search", fetch(target + "/search?q=QUERY")),
]).then(function () {
  document.getElementById("plain").submit();
  setTimeout(function () { document.getElementById("urlenc").submit(); }, 300);
  setTimeout(function () { document.getElementById("out").textContent = "RESULTS" + JSON.stringify(results) + "END"; }, 1500);
});
</script></body></html>"""


@pytest.fixture
def attacker_site(tmp_path: Path):
    """A second local HTTP server on another port: the other site's page."""
    import functools
    import http.server
    import threading

    root = tmp_path / "site"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))

    class Quiet(handler.func):  # type: ignore[misc, name-defined]
        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield root, httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def run_chromium(url: str, profile: Path, *extra: str) -> str:
    import subprocess

    from tests.e2e.test_serve_dashboard import CHROMIUM_FLAGS, chromium

    result = subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=8000",
                             *extra, "--dump-dom", url], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def _results(dom: str) -> dict[str, str]:
    found = re.search(r"RESULTS(.*?)END", dom, re.S)
    assert found, dom[-2000:]
    import html

    return json.loads(html.unescape(found.group(1)))


def test_a_page_on_another_origin_cannot_start_a_turn_or_read_the_dashboard(
    serve, fake_model_server: FakeModelServer, workspace: Path, hermes_home: Path, attacker_site, tmp_path: Path
) -> None:
    from tests.e2e.test_serve_dashboard import UNIQUE, seed

    seed(hermes_home)
    before = api_sessions(hermes_home)
    script_a_file_write(fake_model_server)
    root, site_port = attacker_site
    server = serve()
    (root / "attack.html").write_text(ATTACK_PAGE.replace("TARGET", server.url).replace("QUERY", UNIQUE))
    resolver = "--host-resolver-rules=MAP attacker.test 127.0.0.1, MAP rebind.test 127.0.0.1"
    dom = run_chromium(f"http://attacker.test:{site_port}/attack.html", tmp_path / "chrome1", resolver)
    results = _results(dom)
    assert results["cors_json"] == "blocked" and results["read_dashboard"] == "blocked" and results["read_search"] == "blocked"
    assert results["no_cors_plain"].startswith("read 0")  # opaque: sent, unreadable, and refused by the server
    assert UNIQUE not in json.dumps(results)  # nothing the page read holds the session's word
    nothing_ran(fake_model_server, workspace, hermes_home, before)
    # DNS rebinding: the attacker's name now resolves to 127.0.0.1 and the browser calls the dashboard same-origin.
    rebound = run_chromium(f"http://rebind.test:{server.port}/search?q={UNIQUE}", tmp_path / "chrome2", resolver)
    assert "host_not_allowed" in rebound and UNIQUE not in rebound
    assert call(server, "GET", "/health").status == 200  # still answering
    server.terminate()
    # The control: the same page from a listed origin does reach the model, so the blocks above are real.
    listed = serve(allowed_origins=f'["http://attacker.test:{site_port}"]')
    (root / "attack.html").write_text(ATTACK_PAGE.replace("TARGET", listed.url).replace("QUERY", UNIQUE))
    results = _results(run_chromium(f"http://attacker.test:{site_port}/attack.html", tmp_path / "chrome3", resolver))
    assert results["cors_json"].startswith("read 200") and len(fake_model_server.requests) >= 1
    assert (workspace / "pwned.txt").exists()
    assert results["read_dashboard"].startswith("read 200")  # listing an origin lets its pages read too
