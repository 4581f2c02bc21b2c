"""Tool names, argument schemas and result rendering (no server needed)."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

from hermes.kernel.redact import redact_text
from hermes.plugins.mcp.convert import render_result, safe_schema, tool_name

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 100).decode()


def test_tool_names_are_valid_for_both_providers_and_stay_distinct() -> None:
    assert tool_name("github", "create_issue") == "mcp_github_create_issue"
    assert tool_name("my.server", "do thing/now") == "mcp_my_server_do_thing_now"
    long_a, long_b = tool_name("s", "x" * 80 + "a"), tool_name("s", "x" * 80 + "b")
    assert len(long_a) == 64 and len(long_b) == 64 and long_a != long_b
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", n) for n in (long_a, long_b))


def test_schema_gets_an_object_top_level_without_combinators() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "argsModel",
        "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
        "properties": {"a": {"type": "string"}, "b": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
        "required": ["a", "ghost"],
    }
    out = safe_schema(schema)
    assert out == {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
        "required": ["a"],
    }
    assert safe_schema(None) == {"type": "object", "properties": {}}
    nested = safe_schema({"type": "object", "properties": {"tags": {"type": "array"}, "m": {"type": ["array", "null"]}}})
    assert nested["properties"] == {"tags": {"type": "array", "items": {}}, "m": {"type": ["array", "null"], "items": {}}}
    assert safe_schema({"type": "object", "required": ["x"]}) == {"type": "object", "properties": {}}


def test_text_image_resource_and_structured_content_render_as_text(tmp_path: Path) -> None:
    content = [
        {"type": "text", "text": "hello"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {"type": "resource", "resource": {"uri": "file:///notes.md", "text": "# Notes"}},
        {"type": "resource", "resource": {"uri": "file:///a.bin", "blob": PNG, "mimeType": "application/pdf"}},
        {"type": "resource_link", "uri": "file:///b.txt", "name": "b"},
    ]
    text = render_result(content, {"count": 2}, results_dir=tmp_path, stem="mcp-x")
    lines = text.splitlines()
    assert lines[0] == "hello"
    assert lines[1].startswith("[image/png, 1 KB, saved to ")
    image = Path(lines[1].split("saved to ", 1)[1].rstrip("]"))
    assert image.parent == tmp_path and image.read_bytes().startswith(b"\x89PNG")
    assert lines[2:4] == ["[resource file:///notes.md]", "# Notes"]
    assert lines[4].startswith("[resource file:///a.bin] [application/pdf, 1 KB, saved to ")
    assert lines[5] == "[resource link file:///b.txt: b]"
    assert json.loads(lines[6]) == {"count": 2}


def test_structured_content_is_not_repeated_when_a_text_block_holds_it() -> None:
    assert render_result([{"type": "text", "text": '{"sum": 3}'}], {"sum": 3}) == '{"sum": 3}'
    assert render_result([{"type": "text", "text": "ok"}], {"result": "ok"}) == "ok"
    assert render_result([], {"sum": 3}) == '{"sum": 3}'
    assert render_result([]) == "(no content)"


def test_redaction_runs_over_text_but_never_over_image_data(tmp_path: Path) -> None:
    seen: list[str] = []

    def redact(text: str) -> str:
        seen.append(text)
        return redact_text(text)

    key = "sk-proj-" + "a1b2c3d4" * 5
    text = render_result(
        [{"type": "text", "text": f"key={key}"}, {"type": "image", "data": PNG, "mimeType": "image/png"}],
        results_dir=tmp_path, redact=redact,
    )  # fmt: skip
    assert key not in text
    assert all(PNG not in s for s in seen)


def test_an_image_without_a_results_folder_is_described_not_inlined() -> None:
    text = render_result([{"type": "image", "data": PNG, "mimeType": "image/png"}])
    assert text == "[image/png, 1 KB, not shown]"
