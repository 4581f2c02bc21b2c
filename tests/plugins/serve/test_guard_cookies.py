"""guard.py's Host/Origin/Content-Type rules and cookies.py's signed sessions, without a server."""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
import time
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from hermes.kernel.config import DEFAULTS, Config
from hermes.kernel.errors import ConfigError
from hermes.plugins.serve.cookies import SessionBook, load_secret, session_hours
from hermes.plugins.serve.guard import GuardMiddleware, GuardPolicy, request_view
from hermes.plugins.serve.keys import ApiKey, hash_key

KEY = ApiKey("app", hash_key("hk-plain"), "hk-plain")


def test_default_hosts_are_loopback_with_the_servers_port_and_the_bind_address() -> None:
    policy = GuardPolicy()
    for host in ("127.0.0.1:8642", "localhost:8642", "[::1]:8642", "127.1.2.3:8642", "app.localhost:8642"):
        assert policy.host_allowed(host, 8642, "http"), host
    for host in ("evil.example:8642", "127.0.0.1:9999", "localhost", "", "127.0.0.1:x", "localhost.evil.example:8642",
                 "192.168.1.5:8642"):  # fmt: skip
        assert not policy.host_allowed(host, 8642, "http"), host
    policy.bound_to("192.168.1.5")
    assert policy.host_allowed("192.168.1.5:8642", 8642, "http")
    wildcard = GuardPolicy()
    wildcard.bound_to("0.0.0.0")
    assert not wildcard.host_allowed("0.0.0.0:8642", 8642, "http")


def test_configured_hosts_add_names_ports_and_subdomains() -> None:
    policy = GuardPolicy.from_config(Config({**DEFAULTS, "serve": {**DEFAULTS["serve"],
                                                                    "allowed_hosts": ["hermes.lan", "*.corp.example", "box:443"]}}))  # fmt: skip
    assert policy.host_allowed("hermes.lan:1234", 8642, "http") and policy.host_allowed("a.corp.example", 8642, "http")
    assert policy.host_allowed("box", 8642, "https") and not policy.host_allowed("box", 8642, "http")
    assert not policy.host_allowed("corp.example.evil:8642", 8642, "http") and not policy.host_allowed("xcorp.example", 8642, "http")
    with pytest.raises(ConfigError, match="serve.allowed_hosts must be a list"):
        GuardPolicy.from_config(Config({**DEFAULTS, "serve": {**DEFAULTS["serve"], "allowed_hosts": [1]}}))


def _client(policy: GuardPolicy) -> TestClient:
    async def echo(request):  # type: ignore[no-untyped-def]
        view = request_view(request.scope)
        return JSONResponse({"origin": view.origin, "secure": view.secure})

    app = Starlette(routes=[Route("/x", echo, methods=["GET", "POST", "DELETE"])],
                    middleware=[Middleware(GuardMiddleware, policy=policy)])  # fmt: skip
    return TestClient(app, base_url="http://127.0.0.1:8642")


def test_the_middleware_refuses_foreign_hosts_origins_and_bodies_browsers_send_freely() -> None:
    client = _client(GuardPolicy(allowed_origins=("https://app.example",)))
    client.app.user_middleware  # noqa: B018 - the app is built
    ok = client.post("/x", json={})
    assert ok.status_code == 200 and ok.json() == {"origin": "http://127.0.0.1:8642", "secure": False}
    cases = [
        ({"host": "evil.example:8642"}, {}, 403, "host_not_allowed", "serve.allowed_hosts"),
        ({"content-type": "text/plain"}, {"content": b"{}"}, 415, "unsupported_media_type", "application/json"),
        ({"content-type": "application/x-www-form-urlencoded"}, {"content": b"a=1"}, 415, "unsupported_media_type", "form"),
        ({"content-type": "multipart/form-data; boundary=x"}, {"content": b"--x--"}, 415, "unsupported_media_type", "multipart"),
        ({"origin": "https://evil.example"}, {"json": {}}, 403, "origin_not_allowed", "serve.allowed_origins"),
        ({"origin": "null"}, {"json": {}}, 403, "origin_not_allowed", "serve.allowed_origins"),
        ({"sec-fetch-site": "cross-site"}, {"json": {}}, 403, "origin_not_allowed", "Sec-Fetch-Site"),
        ({"x-forwarded-host": "127.0.0.1:8642", "host": "evil.example"}, {"json": {}}, 403, "host_not_allowed", "Host"),
    ]
    for headers, body, status, code, words in cases:
        refused = client.post("/x", headers=headers, **body)
        assert refused.status_code == status, (headers, refused.text)
        error = refused.json()["error"]
        assert error["code"] == code and (words in error["message"] or code == "unsupported_media_type"), error
    assert client.post("/x", headers={"origin": "http://127.0.0.1:8642", "sec-fetch-site": "same-origin"}, json={}).status_code == 200
    listed = client.post("/x", headers={"origin": "https://app.example", "sec-fetch-site": "cross-site"}, json={})
    assert listed.status_code == 200 and listed.headers["access-control-allow-origin"] == "https://app.example"
    assert "access-control-allow-credentials" not in listed.headers
    preflight = client.options("/x", headers={"origin": "https://app.example", "access-control-request-method": "POST"})
    assert preflight.status_code == 204 and "content-type" in preflight.headers["access-control-allow-headers"]
    assert client.get("/x", headers={"origin": "https://evil.example"}).status_code == 200  # a read: the browser blocks it
    assert client.delete("/x").status_code == 200  # no body: nothing to smuggle


def test_forwarded_headers_count_only_behind_a_trusted_proxy() -> None:
    headers = {"x-forwarded-proto": "https", "x-forwarded-host": "hermes.corp.example"}
    untrusted = _client(GuardPolicy()).get("/x", headers=headers)
    assert untrusted.status_code == 200 and untrusted.json() == {"origin": "http://127.0.0.1:8642", "secure": False}
    trusted = _client(GuardPolicy(allowed_hosts=("hermes.corp.example",), trust_proxy=True))
    seen = trusted.get("/x", headers=headers)
    assert seen.json() == {"origin": "https://hermes.corp.example", "secure": True}
    assert trusted.post("/x", headers={**headers, "origin": "https://hermes.corp.example"}, json={}).status_code == 200
    refused = _client(GuardPolicy(trust_proxy=True)).get("/x", headers=headers)
    assert refused.status_code == 403 and "X-Forwarded-Host" in refused.json()["error"]["message"]


def test_the_secret_is_created_once_private_and_stable(tmp_path: Path) -> None:
    first = load_secret(tmp_path)
    path = tmp_path / "serve_secret"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and len(first) == 32
    assert load_secret(tmp_path) == first
    os.chmod(path, 0o644)
    assert load_secret(tmp_path) == first and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".serve_secret")]  # no temporary left


def test_sessions_are_new_each_sign_in_and_end_on_logout_expiry_and_key_removal(tmp_path: Path) -> None:
    book = SessionBook(tmp_path, hours=1)
    one, max_age = book.sign_in(KEY)
    two, _ = book.sign_in(KEY)
    assert one != two and max_age == 3600 and "hk-plain" not in one and KEY.sha256 not in one
    assert book.key_for([KEY], one) == KEY and book.key_for([KEY], two) == KEY
    assert stat.S_IMODE((tmp_path / "serve_sessions.json").stat().st_mode) == 0o600
    # Another process sharing the home sees the same record.
    assert SessionBook(tmp_path).key_for([KEY], one) == KEY
    assert book.sign_out(one) and book.key_for([KEY], one) is None and book.key_for([KEY], two) == KEY
    assert not book.sign_out(one)
    # The same name with another hash (a key removed and re-created) does not inherit the session.
    assert book.key_for([ApiKey("app", hash_key("hk-other"), "hk-other")], two) is None
    assert book.key_for([], two) is None
    assert book.end_key("app") == 1 and book.key_for([KEY], two) is None
    # A tampered expiry, a tampered MAC, garbage.
    three, _ = book.sign_in(KEY)
    v, sid, expires, mac = three.split(".")
    assert book.key_for([KEY], f"{v}.{sid}.{int(expires) + 10}.{mac}") is None
    assert book.key_for([KEY], f"{v}.{sid}.{expires}.{mac[:-2]}xx") is None
    assert book.key_for([KEY], "garbage") is None and book.key_for([KEY], None) is None
    now = [1_000_000.0]
    short = SessionBook(tmp_path, hours=0.0003, clock=lambda: now[0])  # about a second
    four, _ = short.sign_in(KEY)
    assert short.key_for([KEY], four) == KEY
    now[0] += 0.9
    assert short.key_for([KEY], four) == KEY
    now[0] += 0.2
    assert short.key_for([KEY], four) is None


def test_a_cookie_computed_from_the_config_hash_is_refused(tmp_path: Path) -> None:
    # What the old code accepted: the key's name and HMAC(key hash, "hermes-dashboard").
    book = SessionBook(tmp_path)
    old = f"app.{hmac.new(bytes.fromhex(KEY.sha256), b'hermes-dashboard', hashlib.sha256).hexdigest()}"
    assert book.key_for([KEY], old) is None
    # Signing with the hash as if it were the secret does not help either.
    forger = SessionBook(tmp_path / "elsewhere", secret=bytes.fromhex(KEY.sha256))
    forged, _ = forger.sign_in(KEY)
    assert book.key_for([KEY], forged) is None


def test_the_login_csrf_token_is_tied_to_its_nonce(tmp_path: Path) -> None:
    book = SessionBook(tmp_path)
    nonce, token = book.login_form()
    other_nonce, other_token = book.login_form()
    assert book.csrf_ok(nonce, token) and not book.csrf_ok(nonce, other_token) and not book.csrf_ok(other_nonce, token)
    assert not book.csrf_ok(None, token) and not book.csrf_ok(nonce, "") and not book.csrf_ok(nonce, None)
    stale = f"{int(time.time()) - 1}.{nonce.split('.', 1)[1]}"
    assert not book.csrf_ok(stale, book._csrf(stale))


def test_session_hours_is_checked() -> None:
    assert session_hours(Config(DEFAULTS)) == 12.0
    with pytest.raises(ConfigError, match="serve.session_hours"):
        session_hours(Config({**DEFAULTS, "serve": {**DEFAULTS["serve"], "session_hours": 0}}))


@pytest.mark.parametrize("text", ["zz" * 40, "ab" * 10, "canary-51e0d2" + "0" * 64])
def test_a_damaged_secret_is_one_clear_line_never_a_crash(tmp_path, text: str) -> None:
    from hermes.kernel.errors import ConfigError
    from hermes.plugins.serve.cookies import load_secret

    (tmp_path / "serve_secret").write_text(text)
    with pytest.raises(ConfigError, match=r"serve_secret is damaged \(not 64 or more hex digits\); delete it"):
        load_secret(tmp_path)
