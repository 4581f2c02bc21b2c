"""One tool result from blocks and structured content: no repeats, no base64 (no server needed)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from hermes.plugins.mcp.results import render_result, repeats_blocks

PNG_BYTES = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 20
PNG = base64.b64encode(PNG_BYTES).decode()
WAV = base64.b64encode(b"RIFF" + bytes(range(256)) * 8).decode()
TEXT = "line one\nline two\n" * 50
ROWS = {"rows": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]}


def text(value: str) -> list[dict]:
    return [{"type": "text", "text": value}]


# The shapes of the fault table: the same data as text and as structured content.
SAME_DATA = [
    pytest.param(text(TEXT), {"content": TEXT}, id="content-wrapper"),  # server-filesystem
    pytest.param(text("42"), {"result": 42}, id="result-wrapper-number"),  # FastMCP, a plain return value
    pytest.param(text(json.dumps(ROWS, indent=2)), ROWS, id="pretty-json-vs-object"),  # server-memory
    pytest.param(text(json.dumps(ROWS)), {"result": ROWS}, id="json-vs-wrapped-object"),
    pytest.param(text(json.dumps([1, 2, 3])), {"result": [1, 2, 3]}, id="list-in-wrapper"),
    pytest.param(text(TEXT), {"content": json.dumps(TEXT)}, id="json-string-of-the-text"),
    pytest.param(text("  a   b\n c "), {"text": "a b c"}, id="whitespace"),
    pytest.param(text(TEXT), [{"type": "text", "text": TEXT}], id="blocks-again-as-list"),
    pytest.param(text(json.dumps(ROWS)), json.dumps(ROWS), id="json-text-vs-json-text"),
    pytest.param(text("first") + text("second"), {"content": "first\nsecond"}, id="two-blocks-joined"),
]


@pytest.mark.parametrize(("content", "structured"), SAME_DATA)
def test_structured_content_that_repeats_the_blocks_is_sent_once(content: list[dict], structured: object) -> None:
    assert repeats_blocks(structured, content)
    out = render_result(content, structured)
    assert out == "\n".join(b["text"] for b in content)


@pytest.mark.parametrize(
    ("content", "structured"),
    [
        (text("done"), {"count": 2}),
        (text(json.dumps(ROWS)), {"rows": [{"id": 1, "name": "a"}]}),  # a different value
        (text("42"), {"result": 43}),
        (text("hello"), {"content": "hello", "more": 1}),  # a wrapper with something beside it
        ([], {"sum": 3}),
    ],
)
def test_structured_content_that_says_more_is_kept(content: list[dict], structured: object) -> None:
    assert not repeats_blocks(structured, content)
    out = render_result(content, structured)
    assert json.loads(out.splitlines()[-1]) == structured


def saved(line: str) -> Path:
    return Path(line.split("saved to ", 1)[1].rstrip("]"))


def test_an_image_repeated_in_structured_content_is_one_line_and_one_file(tmp_path: Path) -> None:
    # server-filesystem's read_media_file: the block, and the block again under {"content": [...]}.
    block = {"type": "image", "data": PNG, "mimeType": "image/png"}
    out = render_result([block], {"content": [block]}, results_dir=tmp_path, stem="mcp-fs")
    assert "\n" not in out and out.startswith("[image/png, 5 KB, saved to ")
    assert saved(out).read_bytes() == PNG_BYTES
    assert len(list(tmp_path.iterdir())) == 1


@pytest.mark.parametrize(
    "structured",
    [
        {"picture": PNG, "caption": "a chart"},  # bare base64
        {"picture": "data:image/png;base64," + PNG, "caption": "a chart"},  # a data: URI
        {"items": [{"type": "image", "data": PNG, "mimeType": "image/png"}], "caption": "a chart"},
        {"file": {"uri": "file:///c.png", "blob": PNG, "mimeType": "image/png"}, "caption": "a chart"},
    ],
    ids=["base64", "data-uri", "image-block", "embedded-blob"],
)
def test_binary_inside_structured_content_goes_to_a_file(tmp_path: Path, structured: dict) -> None:
    out = render_result(text("see the chart"), structured, results_dir=tmp_path, stem="mcp-x")
    assert PNG[:200] not in out
    assert len(out) < 400
    lines = out.splitlines()
    assert lines[0] == "see the chart"
    rest = json.loads(lines[1])
    assert rest["caption"] == "a chart"
    line = json.dumps(rest)
    assert "image/png" in line and "saved to " in line
    (path,) = tmp_path.iterdir()
    assert path.read_bytes() == PNG_BYTES and path.suffix == ".png"


def test_audio_blocks_and_blobs_are_files_and_text_redaction_never_sees_the_data(tmp_path: Path) -> None:
    seen: list[str] = []

    def redact(value: str) -> str:
        seen.append(value)
        return value

    content = [
        {"type": "audio", "data": WAV, "mimeType": "audio/wav"},
        {"type": "resource", "resource": {"uri": "file:///s.wav", "blob": WAV, "mimeType": "audio/wav"}},
    ]
    out = render_result(content, {"sound": WAV, "note": "x"}, results_dir=tmp_path, redact=redact)
    assert WAV[:100] not in out and all(WAV[:100] not in s for s in seen)
    assert out.count("audio/wav") == 3 and len(list(tmp_path.iterdir())) == 1  # one payload, one file


def test_short_or_textual_strings_stay_as_they_are(tmp_path: Path) -> None:
    b64_text = base64.b64encode(b"plain readable text " * 20).decode()
    structured = {"id": "Zm9v", "words": "hello world " * 40, "b64text": b64_text}
    out = render_result([], structured, results_dir=tmp_path)
    assert json.loads(out) == structured and not list(tmp_path.iterdir())
