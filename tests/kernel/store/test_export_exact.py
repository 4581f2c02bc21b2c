"""``hermes sessions export``: the Markdown transcript and the JSON Lines, character for character."""

from __future__ import annotations

from hermes.kernel.store.export import export_jsonl, export_markdown, iso_time

SESSION = {
    "id": "s1", "source": "cli", "model": "m-1", "parent_session_id": None, "started_at": 0.0,
    "ended_at": 90061.5, "end_reason": "user_exit", "title": "Café plan", "message_count": 3,
}  # fmt: skip
MESSAGES = [
    {"role": "user", "content": "héllo", "timestamp": 1.0, "tool_name": None},
    {"role": "assistant", "content": None, "timestamp": 2.0, "reasoning": "think\nmore",
     "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}]},
    {"role": "tool", "tool_name": "read_file", "content": [{"type": "text", "text": "日本"}], "timestamp": 3.0},
]  # fmt: skip

MARKDOWN = """\
# Café plan

- **id**: s1
- **source**: cli
- **model**: m-1
- **started_at**: 1970-01-01T00:00:00+00:00
- **ended_at**: 1970-01-02T01:01:01+00:00
- **end_reason**: user_exit

## user · 1970-01-01T00:00:01+00:00

héllo

## assistant · 1970-01-01T00:00:02+00:00

> think
> more

```json
{
  "id": "c1",
  "function": {
    "name": "f",
    "arguments": "{}"
  }
}
```

## tool (read_file) · 1970-01-01T00:00:03+00:00

```json
[
  {
    "type": "text",
    "text": "日本"
  }
]
```
"""


def test_markdown_transcript_is_exact() -> None:
    assert export_markdown(SESSION, MESSAGES) == MARKDOWN


def test_markdown_of_an_untitled_empty_session_is_headed_by_its_id() -> None:
    assert export_markdown({"id": "s2", "title": None}, []) == "# s2\n\n- **id**: s2\n"


def test_jsonl_is_one_line_per_row_with_text_kept_as_is() -> None:
    assert export_jsonl({"id": "s1", "title": "Café"}, [{"role": "user", "content": "日本"}]) == (
        '{"type": "session", "id": "s1", "title": "Café"}\n{"type": "message", "role": "user", "content": "日本"}\n'
    )


def test_iso_time() -> None:
    assert iso_time(None) is None
    assert iso_time(1.9) == "1970-01-01T00:00:01+00:00"


def test_content_text() -> None:
    from hermes.kernel.store.export import content_text

    assert (content_text(None), content_text("plain"), content_text({"a": "é"})) == ("", "plain", '```json\n{\n  "a": "é"\n}\n```')
