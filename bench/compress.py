"""Context engines on long transcripts: time of the non-model phases and token savings.

Both built-in engines (``compressor`` with a scripted, instant summarizer,
and ``masking``) compress synthetic tool-using transcripts of 200, 2,000 and
20,000 messages (terminal and read_file calls, some duplicate outputs, long
arguments, images). The time is everything but the model: pruning,
boundaries, serialising and redacting the summary input, assembly. Growth
ratios between sizes show whether the work stays near-linear (10× more
messages should cost about 10× the time).
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

SIZES = (200, 2_000, 20_000)
CONTEXT_LENGTH = 128_000
ENGINES = ("compressor", "masking")
_IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "iVBORw0KGgo" * 2_000}}
_SUMMARY = "## Active Task\nfinish the report\n## Goal\nkeep going\n" + "## Critical Context\n- a fact\n" * 40


def transcript(size: int) -> list[dict[str, Any]]:
    """A valid conversation of exactly ``size`` messages, deterministic."""
    messages: list[dict[str, Any]] = []
    step = 0
    while len(messages) < size - 1:
        step += 1
        if step % 25 == 1:
            content: Any = f"task {step}: fix the parser"
            if step % 50 == 1:
                content = [{"type": "text", "text": f"look at screenshot {step}"}, _IMAGE]
            messages.append({"role": "user", "content": content})
        tool = "terminal" if step % 2 else "read_file"
        args = {"command": f"pytest -k case{step}"} if tool == "terminal" else {"path": f"src/m{step % 40}.py"}
        if step % 10 == 0:
            args["content"] = "z" * 2_000  # a long argument
        call_id = f"call_{step}"
        output = ("exit code: 1\n" + f"FAILED case{step}\n" * 80) if tool == "terminal" else f"{step % 40}|source\n" * 120
        messages += [
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": call_id, "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}]},
            {"role": "tool", "tool_call_id": call_id, "tool_name": tool, "content": output},
        ]  # fmt: skip
        if step % 25 == 0:
            messages.append({"role": "assistant", "content": f"progress after step {step}"})
    messages = messages[: size - 1]
    while messages[-1]["role"] == "assistant" and messages[-1].get("tool_calls"):
        messages.pop()  # never end on an unanswered batch
    messages.append({"role": "user", "content": "now write the report"})
    return messages


def _engine(name: str) -> Any:
    from hermes.context_engines.compressor import Compressor
    from hermes.context_engines.masking import Masking

    if name == "compressor":
        return Compressor(context_length=CONTEXT_LENGTH, summarizer=lambda system, prompt, max_tokens: _SUMMARY)
    return Masking(context_length=CONTEXT_LENGTH)


def _measure(name: str, messages: list[dict[str, Any]], runs: int) -> dict[str, Any]:
    from hermes.kernel.context_engine import estimate_tokens
    from hermes.kernel.testing import validate_messages

    times = []
    out: list[dict[str, Any]] = []
    for _ in range(runs):
        engine = _engine(name)
        started = time.perf_counter()
        out = engine.compress(messages)
        times.append(time.perf_counter() - started)
    validate_messages(out)
    before, after = estimate_tokens(messages), estimate_tokens(out)
    return {
        "ms": round(statistics.median(times) * 1000, 2),
        "messages_after": len(out),
        "tokens_before": before,
        "tokens_after": after,
        "saved_pct": round(100 * (before - after) / before, 1),
    }


def run(runs: int | None = None, sizes: tuple[int, ...] = SIZES) -> dict[str, Any]:
    runs = max(1, runs or 3)
    rows: dict[str, dict[str, Any]] = {name: {} for name in ENGINES}
    for size in sizes:
        messages = transcript(size)
        for name in ENGINES:
            rows[name][str(size)] = _measure(name, messages, runs)
    growth = {
        name: {
            f"{a}->{b}": round(rows[name][str(b)]["ms"] / max(rows[name][str(a)]["ms"], 1e-6), 1)
            for a, b in zip(sizes, sizes[1:])
        }
        for name in ENGINES
    }
    result = {"benchmark": "compress", "runs": runs, "context_length": CONTEXT_LENGTH, "sizes": list(sizes),
              "engines": rows, "time_growth": growth}  # fmt: skip
    print(f"compress (median of {runs} runs, window {CONTEXT_LENGTH:,} tokens, scripted summarizer)")
    print(f"  {'engine':<11}{'messages':>9}{'ms':>10}{'tokens before':>15}{'after':>9}{'saved':>8}")
    for name in ENGINES:
        for size in sizes:
            row = rows[name][str(size)]
            print(f"  {name:<11}{size:>9,}{row['ms']:>10.2f}{row['tokens_before']:>15,}"
                  f"{row['tokens_after']:>9,}{row['saved_pct']:>7.1f}%")
        steps = ", ".join(f"{k}: {v}×" for k, v in growth[name].items())
        print(f"  {name:<11} time growth (10× the messages should cost ~10×): {steps}")
    return result
