"""Message content on its way into the store, exactly: image descriptions, search text, LIKE escaping."""

from __future__ import annotations

import pytest

from hermes.kernel.store.content import encode_content, strip_images, to_json, tool_args_text
from hermes.kernel.store.titles import escape_like


def _openai(url: object) -> dict:
    return {"type": "image_url", "image_url": url}


@pytest.mark.parametrize(
    ("url", "text"),
    [
        # The payload is everything after the first comma; 2,047 base64 characters decode to
        # 1,535 bytes (1 KB after rounding), 2,048 to 1,536 bytes (2 KB).
        ({"url": "data:image/png;base64," + "A" * 2047}, "[image image/png, 1 KB, not stored]"),
        ({"url": "data:image/png;base64," + "A" * 2048}, "[image image/png, 2 KB, not stored]"),
        ({"url": "data:image/png;base64," + "A" * 1000 + "," + "A" * 1047}, "[image image/png, 2 KB, not stored]"),
        # The media type ends at the first semicolon; none given reads "image".
        ({"url": "data:image/gif;name=a.gif;base64," + "A" * 2048}, "[image image/gif, 2 KB, not stored]"),
        ({"url": "data:;base64," + "A" * 2048}, "[image image, 2 KB, not stored]"),
        # The url may be given directly instead of inside {"url": ...}.
        ("data:image/jpeg;base64," + "A" * 2048, "[image image/jpeg, 2 KB, not stored]"),
    ],
)
def test_openai_base64_images_are_described(url: object, text: str) -> None:
    assert strip_images([_openai(url)]) == [{"type": "text", "text": text}]


@pytest.mark.parametrize(
    "url",
    [
        {"url": "https://example.com/a;base64,QUJD.png"},  # a link, not data: kept as it is
        {"url": "data:image/png,plain"},  # data without base64
        {},  # no url at all
    ],
)
def test_openai_images_without_base64_data_are_kept(url: object) -> None:
    part = _openai(url)
    assert strip_images([part]) == [part]


@pytest.mark.parametrize(
    ("source", "text"),
    [
        ({"type": "base64", "media_type": "image/webp", "data": "A" * 2048}, "[image image/webp, 2 KB, not stored]"),
        ({"type": "base64", "data": "A" * 2048}, "[image image, 2 KB, not stored]"),
        ({"type": "base64", "media_type": "image/png"}, "[image image/png, 1 KB, not stored]"),  # no data
        ({"type": "base64", "media_type": "image/png", "data": 7}, "[image image/png, 1 KB, not stored]"),
    ],
)
def test_anthropic_base64_images_are_described(source: dict, text: str) -> None:
    assert strip_images([{"type": "image", "source": source}]) == [{"type": "text", "text": text}]


def test_anthropic_images_by_url_are_kept() -> None:
    part = {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}
    assert strip_images([part]) == [part]


@pytest.mark.parametrize(
    ("content", "plain"),
    [
        ([{"type": "text", "text": "one"}, {"type": "text", "text": "two"}], "one\ntwo"),
        ([{"type": "text", "text": "one"}, {"type": "image", "source": {}}, 5, "two"], "one\ntwo"),
        (
            [{"content": "from content"}, {"type": "thinking", "thinking": "from thinking"}],
            "from content\nfrom thinking",
        ),
        ({"text": "text first", "content": "not this"}, "text first"),
        ({"content": [{"type": "text", "text": "nested"}], "thinking": "not this"}, "nested"),
        ({"type": "image"}, ""),
        ([None, 3.5], ""),
    ],
)
def test_structured_content_is_searched_by_its_text_parts(content: object, plain: str) -> None:
    text, parts = encode_content(content)
    assert text == plain
    assert parts is not None


def test_structured_content_is_found_by_search_through_the_store(store) -> None:  # noqa: ANN001
    sid = store.create_session()
    store.append_messages(sid, [{"role": "tool", "content": [{"type": "text", "text": "zebra"}, {"content": "okapi"}]}])
    assert [hit.session_id for hit in store.search("okapi")] == [sid]
    assert store.get_messages(sid)[0]["content"] == [{"type": "text", "text": "zebra"}, {"content": "okapi"}]


def test_escape_like_escapes_the_escape_and_both_wildcards() -> None:
    assert escape_like("50%_a\\b") == "50\\%\\_a\\\\b"
    assert escape_like("x%y_z!", "!") == "x!%y!_z!!"
    assert escape_like("plain") == "plain"


def test_stored_json_is_compact_ascii_and_refuses_what_would_not_read_back_equal() -> None:
    assert to_json({"a": [1, "é"], "b": None}) == '{"a":[1,"\\u00e9"],"b":null}'
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        to_json([float("nan")])


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        # The base64 characters are the match less "data:", the media type and ";base64,".
        ("see data:image/png;base64," + "A" * 2047 + " end", "see [image image/png, 1 KB, not stored] end"),
        ("see data:image/png;base64," + "A" * 2048 + " end", "see [image image/png, 2 KB, not stored] end"),
        ("data:image/svg+xml;base64," + "A" * 16, "[image image/svg+xml, 1 KB, not stored]"),
        ("data:image/png;base64," + "A" * 15, "data:image/png;base64," + "A" * 15),  # too short to be an image
    ],
)
def test_inline_data_urls_in_text_are_described(text: str, stored: str) -> None:
    assert strip_images(text) == stored
    assert strip_images({"nested": [text]}) == {"nested": [stored]}


@pytest.mark.parametrize(
    ("content", "columns"),
    [
        (None, (None, None)),
        ("plain", ("plain", None)),
        ("a\x00b", ("a b", '"a\\u0000b"')),  # NUL: the text searched has a space, the JSON keeps it
        ("x\ud800y", ("x?y", '"x\\ud800y"')),  # a lone surrogate SQLite cannot store as text
        ([{"type": "text", "text": "p\x00q"}], ("p q", '[{"type":"text","text":"p\\u0000q"}]')),
    ],
)
def test_content_columns_for_text_sqlite_can_and_cannot_store(content: object, columns: tuple) -> None:
    assert encode_content(content) == columns


@pytest.mark.parametrize(
    ("calls", "text"),
    [
        (["not a call", {"function": {"name": "f", "arguments": '{"a": 1}'}}], '{"a": 1}'),
        ([{"arguments": "raw args"}, {"arguments": "more"}], "raw args more"),
        ([{"input": {"path": "café", "n": 1}}], '{"path": "café", "n": 1}'),
        ([{"function": {"name": "f"}, "input": {"k": 1}}], '{"k": 1}'),
        ([{"arguments": {"x": 1}, "input": {"y": 2}}], '{"y": 2}'),
        ([{"name": "no arguments"}], None),
        ([], None),
        ({"arguments": "not a list"}, None),
    ],
)
def test_tool_arguments_as_one_searchable_text(calls: object, text: str | None) -> None:
    assert tool_args_text(calls) == text
