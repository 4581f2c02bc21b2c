"""The dashboard in a real headless Chromium (Debian's ``chromium``): pages, search, lineage, charts, screenshots.

Chromium runs once per page with ``--dump-dom`` and ``--screenshot``;
``--enable-logging=stderr`` prints every console message as a ``CONSOLE``
line, so a page with a script error or a blocked resource fails the test (a
control page proves the detector sees errors). No Chromium installed is a
failure naming the fix, never a skip: ``.ci/run`` installs it.
"""

from __future__ import annotations

import http.cookiejar
import json
import re
import shutil
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest

from hermes.kernel.store import SQLiteSessionStore
from hermes.kernel.testing import FakeModelServer
from hermes.kernel.testing.fixtures import fake_model_server  # noqa: F401
from hermes.kernel.usage import CanonicalUsage, CostResult
from tests.e2e.serve_process import ServeProcess, serve_env

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--enable-logging=stderr", "--v=0", "--window-size=1200,1000",
]  # fmt: skip
UNIQUE = "zanzibarquokka"


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("chromium is not installed: run `apt-get install -y chromium` (.ci/run installs it when missing)")
    return found


def render(url: str, shot: Path, profile: Path) -> tuple[str, list[str]]:
    """The page's DOM after its scripts ran, and every console line Chromium printed."""
    result = subprocess.run(
        [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--screenshot={shot}", "--dump-dom", url],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
    return result.stdout, console


class _Tree(HTMLParser):
    """The parent of every ``li.sess`` in the session tree."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str | None] = []
        self.parent: dict[str, str | None] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "li":
            session = dict(attrs).get("data-session")
            if session:
                self.parent[session] = next((s for s in reversed(self.stack) if s), None)
            self.stack.append(session)

    def handle_endtag(self, tag: str) -> None:
        if tag == "li" and self.stack:
            self.stack.pop()


def seed(home: Path) -> dict[str, str]:
    """A lineage compressed twice, a branch, tool calls, usage on two models, and a message with a unique word."""
    home.mkdir(parents=True, exist_ok=True)
    with SQLiteSessionStore(home / "state.db") as store:
        root = store.create_session(source="cli", model="model-a", title="Launch plan")
        store.append_messages(root, [
            {"role": "user", "content": f"The codename is {UNIQUE}; plan the launch."},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "plan.md"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "tool_name": "read_file", "content": "1|step one"},
            {"role": "assistant", "content": "Step one is ready."},
        ])  # fmt: skip
        store.record_usage(root, CanonicalUsage(input_tokens=1200, output_tokens=300, request_count=2), CostResult(0.012, "estimated"))
        middle = store.compression_child(root, [
            {"role": "user", "content": "[CONTEXT HANDOFF] Summary: the launch plan, step one done."},
            {"role": "user", "content": "continue"},
        ])  # fmt: skip
        store.record_usage(middle, CanonicalUsage(input_tokens=800, output_tokens=200, request_count=1), CostResult(0.004, "estimated"))
        tip = store.compression_child(middle, [{"role": "user", "content": "[CONTEXT HANDOFF] Summary: steps one and two done."}])
        # What each compression kept, as the kernel records it (issue 15): scores, misses, review edits.
        store.record_compaction(middle, parent_session_id=root, engine="compressor", fidelity=0.61, missing=[], edited=False)
        store.record_compaction(tip, parent_session_id=middle, engine="compressor", fidelity=0.83,
                                missing=["path: launch.md", "number: <42>"], handoff="steps one and two done", edited=True)  # fmt: skip
        other = store.create_session(source="api", model="model-b")
        store.append_messages(other, [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}])
        store.record_usage(other, CanonicalUsage(input_tokens=500, output_tokens=50, request_count=1), CostResult(0.001, "actual"))
        branch = store.branch(other)
    return {"root": root, "middle": middle, "tip": tip, "other": other, "branch": branch}


def test_dashboard_pages_in_headless_chromium(fake_model_server: FakeModelServer, hermes_home: Path, tmp_path: Path) -> None:
    ids = seed(hermes_home)
    shots = tmp_path / "screenshots"
    shots.mkdir()
    control = tmp_path / "control.html"
    control.write_text("<html><body><script>console.error('control error')</script></body></html>")
    _, control_console = render(control.as_uri(), shots / "control.png", tmp_path / "chromium-control")
    assert any("control error" in line for line in control_console)  # the detector sees console errors

    with ServeProcess(serve_env(fake_model_server, hermes_home)) as server:
        pages = {
            "sessions": "/",
            "search": "/search?q=" + UNIQUE,
            "session-tip": f"/session/{ids['tip']}",
            "session-root": f"/session/{ids['root']}",
            "usage": "/usage",
        }
        doms = {}
        for name, path in pages.items():
            dom, console = render(server.url + path, shots / f"{name}.png", tmp_path / f"chromium-{name}")
            assert console == [], f"{name}: {console}"
            assert 'data-ready="true"' in dom, f"{name}: the page script did not run"
            png = (shots / f"{name}.png").read_bytes()
            assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000
            doms[name] = dom

    tree = _Tree()
    tree.feed(doms["sessions"])
    assert tree.parent[ids["middle"]] == ids["root"] and tree.parent[ids["tip"]] == ids["middle"]  # the compression chain
    assert tree.parent[ids["branch"]] == ids["other"] and tree.parent[ids["root"]] is None
    assert "ended: compression" in doms["sessions"]

    assert f"<mark>{UNIQUE}</mark>" in doms["search"]
    assert f'href="/session/{ids["root"]}#m' in doms["search"] and "1 match(es)" in doms["search"]

    tip = doms["session-tip"]
    assert f"compressed from {ids['middle']}" in tip and "compression note" in tip
    assert "steps one and two done" in tip
    assert "fidelity 0.83 · missing: path: launch.md, number: &lt;42&gt; · note edited in review" in tip
    assert re.search(r"<span class=\"fidelity\" data-fidelity=\"0.83\">", tip) and "not recorded" not in tip
    assert re.search(rf'href="/session/{ids["middle"]}">{ids["middle"]}</a>\s*<span class="reason">\(compression\)', tip)
    root = doms["session-root"]
    assert re.search(rf'compressed into <a href="/session/{ids["middle"]}">{ids["middle"]}</a>; '
                     r'<span class="fidelity" data-fidelity="0.61">fidelity 0.61 · missing: nothing · note not edited', root)  # fmt: skip
    assert root.count('<details class="tool-call"') == 2 and "calls read_file" in root  # call and result, folded
    assert "<details class=\"tool-call\" open" not in root

    usage = doms["usage"]
    bars = re.findall(r'<rect class="bar"[^>]*data-series="(\w+)" data-label="([^"]+)" data-value="([\d.e-]+)"', usage)
    per_model = {(series, label): float(value) for series, label, value in bars if label.startswith("model-")}
    assert per_model[("input", "model-a")] == 2000 and per_model[("output", "model-b")] == 50
    assert per_model[("cost", "model-a")] == pytest.approx(0.016)
    assert any(label.count("-") == 2 for _, label, _ in bars)  # bars per day, labelled YYYY-MM-DD
    for chart in ("tokens-per-day", "cost-per-day", "tokens-per-model", "cost-per-model"):
        assert f'id="{chart}"' in usage


def test_dashboard_sign_in_sets_a_cookie_that_opens_every_page(fake_model_server: FakeModelServer, hermes, hermes_home: Path) -> None:
    seed(hermes_home)
    key = hermes("serve", "key", "add", "viewer").stdout.strip()
    jar = http.cookiejar.CookieJar()

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            return None

    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect)
    def sign_in(server: ServeProcess, key: str) -> None:
        # What the login page's script does: read the form's CSRF token, post JSON with it.
        form = opener.open(server.url + "/login").read().decode()
        token = re.search(r"name='csrf' value='([^']+)'", form).group(1)
        request = urllib.request.Request(server.url + "/login", data=json.dumps({"key": key, "csrf": token}).encode(),
                                         headers={"content-type": "application/json"})  # fmt: skip
        opener.open(request)

    with ServeProcess(serve_env(fake_model_server, hermes_home)) as server:
        with pytest.raises(urllib.error.HTTPError) as away:
            opener.open(server.url + "/usage")
        assert away.value.code == 303 and away.value.headers["location"] == "/login"
        with pytest.raises(urllib.error.HTTPError) as wrong:
            sign_in(server, "hk-wrong")
        assert wrong.value.code == 401 and "not valid" in wrong.value.read().decode()
        with pytest.raises(urllib.error.HTTPError) as form_post:  # the old form post: refused, browsers send it cross-site
            opener.open(server.url + "/login", data=urllib.parse.urlencode({"key": key}).encode())
        assert form_post.value.code == 415
        sign_in(server, key)
        cookie = next(c for c in jar if c.name == "hermes_session")
        assert key not in cookie.value and cookie.has_nonstandard_attr("HttpOnly")
        page = opener.open(server.url + "/usage")
        assert page.status == 200 and 'id="tokens-per-day"' in page.read().decode()
        assert "content-security-policy" in {k.lower() for k in page.headers.keys()}
        bearer = urllib.request.Request(server.url + "/", headers={"authorization": f"Bearer {key}"})
        assert urllib.request.urlopen(bearer).status == 200
        assert hermes("serve", "key", "revoke", "viewer").returncode == 0
        with pytest.raises(urllib.error.HTTPError) as revoked:
            opener.open(server.url + "/usage")
        assert revoked.value.code == 303  # the cookie died with its key


def test_dashboard_pages_never_show_a_stored_secret(fake_model_server: FakeModelServer, hermes_home: Path) -> None:
    # A user can paste a key into a message or a title; the store keeps what was typed,
    # and every page (list, session, search) shows the redaction marker instead.
    secret = "sk-proj-" + "Zq7" * 12
    hermes_home.mkdir(parents=True, exist_ok=True)
    with SQLiteSessionStore(hermes_home / "state.db") as store:
        sid = store.create_session(source="cli", model="model-a", title=f"key {secret}")
        store.append_messages(sid, [{"role": "user", "content": f"zanzibar token {secret} please"},
                                    {"role": "assistant", "content": "noted"}])  # fmt: skip
    with ServeProcess(serve_env(fake_model_server, hermes_home)) as server:
        pages = [urllib.request.urlopen(server.url + path).read().decode()
                 for path in ("/", f"/session/{sid}", "/search?q=zanzibar")]  # fmt: skip
    assert all(secret not in page and secret[8:20] not in page for page in pages)
    assert "zanzibar" in pages[2] and "[REDACTED:" in pages[1]
