"""Rendering of script entries in the OpenAI Chat and Anthropic Messages wire formats.

Bodies, SSE events, error bodies and headers follow the vendors' documented
shapes closely enough that the official SDKs parse them as real responses.
"""

from __future__ import annotations

import json
import re
import time
from datetime import datetime, timezone
from typing import Any

from ..arguments import decode_arguments
from .script import Fault, Reply, ScriptedUsage

__all__ = [
    "without_finish",
    "anthropic_error",
    "anthropic_json",
    "anthropic_sse",
    "estimate_usage",
    "openai_error",
    "openai_json",
    "openai_sse",
    "split_text",
]

_PIECE_RE = re.compile(r"\S+\s*|\s+")


def split_text(text: str) -> list[str]:
    """Word-sized stream pieces that join back to ``text``."""
    return _PIECE_RE.findall(text) or ([text] if text else [])


def _chars(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False)) if value is not None else 0


def estimate_usage(reply: Reply, body: dict[str, Any]) -> ScriptedUsage:
    """The reply's usage, or a rough one from sizes (about four characters a token)."""
    if reply.usage is not None:
        return reply.usage
    prompt = _chars(body.get("messages")) + _chars(body.get("system")) + _chars(body.get("tools"))
    output = len(reply.text) + len(reply.reasoning) + sum(len(c.arguments_json) + len(c.name) for c in reply.tool_calls)
    return ScriptedUsage(
        input_tokens=max(1, prompt // 4),
        output_tokens=max(1, output // 4),
        reasoning_tokens=len(reply.reasoning) // 4,
    )


def _call_id(prefix: str, n: int, index: int, given: str) -> str:
    return given or f"{prefix}_fake{n:04d}{index:02d}"


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return f"{head}data: {payload}\n\n".encode()


def _reset_stamp(seconds: float) -> str:
    moment = datetime.fromtimestamp(time.time() + seconds, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _retry_after(fault: Fault, headers: dict[str, str]) -> None:
    if fault.retry_after is None:
        return
    if fault.retry_after_date:
        import email.utils

        headers["retry-after"] = email.utils.formatdate(time.time() + fault.retry_after, usegmt=True)
    else:
        headers["retry-after"] = f"{fault.retry_after:g}"


#: Wording of the failures beyond the common ones, as vendors and aggregators phrase them:
#: (message, type, code).
_EXTRA_ERRORS: dict[str, tuple[str, str, str | None]] = {
    "thinking_signature": ("messages.1.content.0: Invalid `signature` in `thinking` block",
                           "invalid_request_error", None),
    "image_too_large": ("messages.0.content.1.image.source.base64: image exceeds 5 MB maximum",
                        "invalid_request_error", None),
    "image_rejected": ("This model does not support image input (image_url content).",
                       "invalid_request_error", "unsupported_content"),
    "multimodal_tool_content": ("Invalid content for role 'tool': image parts are not supported in tool messages",
                                "invalid_request_error", None),
    "invalid_encrypted_content": ("The encrypted content for item rs_1 could not be verified.",
                                  "invalid_request_error", "invalid_encrypted_content"),
    "long_context_tier": ("The long context beta is not yet available for this subscription (extra usage required).",
                          "rate_limit_error", None),
    "provider_policy_blocked": ("No endpoints found matching your data policy (Provider routing).",
                                "not_found_error", None),
    "upstream_rate_limit": ("Provider returned error: model is temporarily rate-limited upstream.",
                            "rate_limit_error", None),
    "unknown": ("I'm a teapot", "teapot_error", None),
}


# --- OpenAI Chat Completions ------------------------------------------------------


def _openai_usage(usage: ScriptedUsage, cost: float | None) -> dict[str, Any]:
    prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    data: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens, "audio_tokens": 0,
                                  "cache_write_tokens": usage.cache_write_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens, "audio_tokens": 0},
    }
    if cost is not None:
        data["cost"] = cost
    return data


def openai_json(reply: Reply, body: dict[str, Any], n: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None, "refusal": None}
    if not reply.tool_calls and not reply.text:
        message["content"] = ""
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": _call_id("call", n, i, c.id),
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments_json},
            }
            for i, c in enumerate(reply.tool_calls)
        ]
    return {
        "id": f"chatcmpl-fake{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", ""),
        "choices": [{"index": 0, "message": message, "finish_reason": reply.resolved_finish(), "logprobs": None}],
        "usage": _openai_usage(estimate_usage(reply, body), reply.cost_usd),
        "system_fingerprint": None,
    }


def openai_sse(reply: Reply, body: dict[str, Any], n: int) -> list[bytes]:
    base = {
        "id": f"chatcmpl-fake{n}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model", ""),
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]})

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"reasoning_content": piece}) for piece in split_text(reply.reasoning)]
    events += [chunk({"content": piece}) for piece in split_text(reply.text)]
    for i, call in enumerate(reply.tool_calls):
        head = {"index": i, "id": _call_id("call", n, i, call.id), "type": "function",
                "function": {"name": call.name, "arguments": ""}}
        events.append(chunk({"tool_calls": [head]}))
        args = call.arguments_json
        for start in range(0, len(args), 16):
            events.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": args[start:start + 16]}}]}))
    events.append(chunk({}, reply.resolved_finish()))
    if (body.get("stream_options") or {}).get("include_usage"):
        usage = _openai_usage(estimate_usage(reply, body), reply.cost_usd)
        events.append(_sse({**base, "choices": [], "usage": usage}))
    events.append(_sse("[DONE]"))
    return events


def openai_error(fault: Fault, body: dict[str, Any]) -> tuple[dict[str, str], Any]:
    """Headers and JSON body of an OpenAI error response."""
    model = body.get("model", "")
    headers: dict[str, str] = {}
    kind = fault.kind
    code: str | None = None
    etype = "invalid_request_error"
    if kind == "rate_limit":
        reset = fault.reset_after if fault.reset_after is not None else fault.retry_after
        message = (
            f"Rate limit reached for {model} in organization org-fake on requests per min (RPM): "
            "Limit 3, Used 3, Requested 1."
        )
        etype, code = "requests", "rate_limit_exceeded"
        headers["x-ratelimit-remaining-requests"] = "0"
        if reset is not None:
            headers["x-ratelimit-reset-requests"] = f"{reset:g}s"
            message += f" Please try again in {reset:g}s."
    elif kind == "billing":
        message = "You exceeded your current quota, please check your plan and billing details."
        etype = code = "insufficient_quota"
    elif kind == "auth":
        message = "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys."
        code = "invalid_api_key"
    elif kind == "forbidden":
        message = "You are not allowed to sample from this model"
        etype = "permission_denied"
    elif kind == "model_not_found":
        message = f"The model `{model}` does not exist or you do not have access to it."
        code = "model_not_found"
    elif kind == "payload_too_large":
        message = "Request too large: the request body exceeds the maximum size."
        etype = "request_too_large"
    elif kind == "context_overflow":
        limit = fault.limit or 128000
        message = (
            f"This model's maximum context length is {limit} tokens. However, your messages resulted in "
            f"{limit + 1532} tokens. Please reduce the length of the messages."
        )
        code = "context_length_exceeded"
    elif kind == "content_policy":
        message = "Your request was rejected as a result of our safety system."
        code = "content_policy_violation"
    elif kind in _EXTRA_ERRORS:
        message, etype, code = _EXTRA_ERRORS[kind]
    elif kind == "overloaded":
        message = "The server is overloaded. Please try again later."
        etype = "server_error"
    elif kind == "unavailable":
        message = "The engine is currently overloaded, please try again later."
        etype = "server_error"
    else:
        message = "The server had an error while processing your request. Sorry about that!"
        etype = "server_error"
    _retry_after(fault, headers)
    return headers, {"error": {"message": fault.message or message, "type": etype, "param": None, "code": code}}


# --- Anthropic Messages -------------------------------------------------------------

_STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "content_filter": "refusal"}


def _anthropic_usage(usage: ScriptedUsage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
    }


def _anthropic_blocks(reply: Reply, n: int) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.reasoning:
        blocks.append({"type": "thinking", "thinking": reply.reasoning, "signature": f"fakesig{n}"})
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    for i, call in enumerate(reply.tool_calls):
        try:
            args = decode_arguments(call.arguments_json)
        except ValueError:  # raw text scripted on purpose (nested too deep, not JSON)
            args = {}
        blocks.append({"type": "tool_use", "id": _call_id("toolu", n, i, call.id), "name": call.name, "input": args})
    return blocks


def anthropic_json(reply: Reply, body: dict[str, Any], n: int) -> dict[str, Any]:
    return {
        "id": f"msg_fake{n}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", ""),
        "content": _anthropic_blocks(reply, n),
        "stop_reason": _STOP.get(reply.resolved_finish(), "end_turn"),
        "stop_sequence": None,
        "usage": _anthropic_usage(estimate_usage(reply, body)),
    }


def anthropic_sse(reply: Reply, body: dict[str, Any], n: int) -> list[bytes]:
    usage = estimate_usage(reply, body)
    start_usage = {**_anthropic_usage(usage), "output_tokens": 1}
    message = {**anthropic_json(reply, body, n), "content": [], "stop_reason": None, "usage": start_usage}
    events = [_sse({"type": "message_start", "message": message}, "message_start"), _sse({"type": "ping"}, "ping")]
    # Streamed arguments are the scripted text itself, so raw text (nested too deep, not
    # JSON) reaches the client as a model could send it; a mapping streams as its JSON.
    arguments = iter(call.arguments_json for call in reply.tool_calls)
    for index, block in enumerate(_anthropic_blocks(reply, n)):
        kind = block["type"]
        empty = {"thinking": {"type": "thinking", "thinking": "", "signature": ""},
                 "text": {"type": "text", "text": ""},
                 "tool_use": {**block, "input": {}}}[kind]
        events.append(_sse({"type": "content_block_start", "index": index, "content_block": empty}, "content_block_start"))
        if kind == "thinking":
            deltas = [{"type": "thinking_delta", "thinking": p} for p in split_text(block["thinking"])]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        elif kind == "text":
            deltas = [{"type": "text_delta", "text": p} for p in split_text(block["text"])]
        else:
            raw = next(arguments)
            deltas = [{"type": "input_json_delta", "partial_json": raw[s:s + 16]} for s in range(0, len(raw), 16)]
        for delta in deltas:
            events.append(_sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta"))
        events.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    stop = _STOP.get(reply.resolved_finish(), "end_turn")
    events.append(_sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                        "usage": {"output_tokens": usage.output_tokens}}, "message_delta"))
    events.append(_sse({"type": "message_stop"}, "message_stop"))
    return events


def anthropic_error(fault: Fault, body: dict[str, Any]) -> tuple[dict[str, str], Any]:
    """Headers and JSON body of an Anthropic error response."""
    model = body.get("model", "")
    headers: dict[str, str] = {}
    kind = fault.kind
    etype = "invalid_request_error"
    if kind == "rate_limit":
        reset = fault.reset_after if fault.reset_after is not None else fault.retry_after
        etype = "rate_limit_error"
        message = (
            "This request would exceed the rate limit for your organization of 50 requests per minute. "
            "For details, refer to: https://docs.claude.com/en/api/rate-limits."
        )
        headers["anthropic-ratelimit-requests-remaining"] = "0"
        if reset is not None:
            headers["anthropic-ratelimit-requests-reset"] = _reset_stamp(reset)
    elif kind == "billing":
        etype, message = "billing_error", "Your credit balance is too low to access the Anthropic API."
    elif kind == "auth":
        etype, message = "authentication_error", "invalid x-api-key"
    elif kind == "forbidden":
        etype, message = "permission_error", "Your API key does not have permission to use the specified resource."
    elif kind == "model_not_found":
        etype, message = "not_found_error", f"model: {model}"
    elif kind == "payload_too_large":
        etype, message = "request_too_large", "Request exceeds the maximum allowed number of bytes."
    elif kind == "context_overflow":
        limit = fault.limit or 200000
        message = f"prompt is too long: {limit + 8323} tokens > {limit} maximum"
    elif kind == "content_policy":
        message = "Output blocked by content filtering policy"
    elif kind in _EXTRA_ERRORS:
        message, etype, _ = _EXTRA_ERRORS[kind]
    elif kind in ("overloaded", "unavailable"):
        etype, message = "overloaded_error", "Overloaded"
    else:
        etype, message = "api_error", "Internal server error"
    _retry_after(fault, headers)
    return headers, {"type": "error", "error": {"type": etype, "message": fault.message or message},
                     "request_id": "req_fake"}


def without_finish(api: str, events: list[bytes]) -> list[bytes]:
    """``events`` cut before the finish: no ``finish_reason``/``[DONE]``, no ``message_delta``/``message_stop``."""
    if api == "openai":
        return [e for e in events if b'"finish_reason":null' in e and b'"delta":{}' not in e]
    return [e for e in events if not (e.startswith(b"event: message_delta") or e.startswith(b"event: message_stop"))]
