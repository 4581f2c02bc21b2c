"""Deferred tool loading: past a threshold, tool schemas wait behind a ``tool_search`` tool.

A thousand MCP tools cost tens of thousands of tokens on every request, and
OpenAI refuses more than 128 tools in one. When the tools on offer pass
``tools.defer.min_tools`` or ``tools.defer.context_share`` of the context
window (or the provider's own limit), the schemas of deferrable tools
(:attr:`~.tools.Tool.deferrable`; run-time sources such as MCP are deferrable
unless they say otherwise) leave the request. The model gets ``tool_search``
instead: a small ranking over names and descriptions that loads the best
matches into the next request. Loaded tools are appended after the fixed ones
and never reordered, so the provider's prompt cache keeps its prefix; they stay
loaded for the agent's life (a compaction keeps the agent, so keeps them), and
a resumed session reloads the deferred tools its history called.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .tools import Tool, ToolContext, ToolError

__all__ = [
    "TOOL_SEARCH", "DeferralSettings", "DeferralStats", "ToolSearch", "rank_tools", "schema_tokens", "words",
]  # fmt: skip

log = logging.getLogger(__name__)

TOOL_SEARCH = "tool_search"
_MODES = ("auto", "always", "never")
_MAX_RESULTS_CAP = 20
_DESCRIPTION_CHARS = 200  # of each match, in the search result


def words(text: str) -> list[str]:
    """Lower-case words of ``text``: snake_case, kebab-case, dotted and camelCase names split apart."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", text))
    return re.findall(r"[a-z0-9]+", spaced.lower())


def schema_tokens(schemas: Sequence[Mapping[str, Any]]) -> int:
    """A rough token count of tool schemas (characters / 4, as the context engines estimate)."""
    return len(json.dumps(list(schemas), ensure_ascii=False)) // 4 if schemas else 0


@dataclass(frozen=True)
class _Entry:
    name: str
    full: str  # the name in words, joined by spaces
    name_words: frozenset[str]
    text_words: frozenset[str]  # description and parameter names


def _entry(tool: Tool) -> _Entry:
    params = tool.parameters.get("properties") if isinstance(tool.parameters, dict) else None
    extra = " ".join(str(k) for k in params) if isinstance(params, dict) else ""
    name_words = words(tool.name)
    return _Entry(tool.name, " ".join(name_words), frozenset(name_words),
                  frozenset(words(f"{tool.description} {extra}")))  # fmt: skip


def _term_score(term: str, entry: _Entry) -> float:
    if term in entry.name_words:
        score = 3.0
    elif len(term) >= 3 and any(w.startswith(term) for w in entry.name_words):
        score = 2.0
    else:
        score = 0.0
    if term in entry.text_words:
        score += 1.0
    elif len(term) >= 4 and any(w.startswith(term) for w in entry.text_words):
        score += 0.5
    return score


def rank_tools(query: str, tools: Sequence[Tool], limit: int = 5) -> list[Tool]:
    """The ``limit`` tools that match ``query`` best, best first (ties keep the tools' order).

    ``select:a,b`` names tools exactly. Otherwise a tool scores for each query
    word found in its name (most), as a prefix of a name word, or in its
    description and parameter names, each weighted by how rare the word is
    among the tools, and scaled by the share of query words it matches; a
    query that spells a tool's whole name puts it first. A
    tool that matches no word, or scores half the best or less, is not returned.
    """
    if limit <= 0 or not tools:
        return []
    by_name = {t.name: t for t in tools}
    query = query.strip()
    if query.lower().startswith("select:"):
        picked = dict.fromkeys(n.strip() for n in query[7:].split(","))
        return [by_name[n] for n in picked if n in by_name][:limit]
    terms = list(dict.fromkeys(words(query)))
    if not terms:
        return []
    entries = [_entry(t) for t in tools]
    phrase = " ".join(terms)
    total = len(entries)
    scores: list[tuple[float, int]] = []
    weights = {}
    for term in terms:
        found = sum(1 for e in entries if _term_score(term, e) > 0)
        weights[term] = math.log(1 + total / (1 + found))
    for index, entry in enumerate(entries):
        parts = [_term_score(term, entry) * weights[term] for term in terms]
        matched = sum(1 for part in parts if part > 0)
        if not matched:
            continue
        score = sum(parts) * matched / len(terms)  # a tool that matches more of the query ranks higher
        if query == entry.name or entry.full == phrase or entry.full.endswith(" " + phrase):
            score += 1000.0  # the whole name asked for
        scores.append((score, index))
    scores.sort(key=lambda pair: (-pair[0], pair[1]))
    best = scores[0][0] if scores else 0.0
    return [tools[index] for score, index in scores[:limit] if score * 2 > best]


@dataclass(frozen=True)
class DeferralSettings:
    """``tools.defer.*``: when schemas are deferred and how many tools one search loads."""

    mode: str = "auto"  # auto: past a threshold; always: whenever a tool is deferrable; never
    min_tools: int = 50
    context_share: float = 0.1
    max_results: int = 5

    @classmethod
    def from_config(cls, config: Any) -> DeferralSettings:
        if config is None:
            return cls()
        mode = str(config.get("tools.defer.mode", cls.mode) or cls.mode)
        if mode not in _MODES:
            log.warning("tools.defer.mode %r is not one of %s; using auto", mode, ", ".join(_MODES))
            mode = "auto"
        return cls(
            mode=mode,
            min_tools=int(config.get("tools.defer.min_tools", cls.min_tools)),
            context_share=float(config.get("tools.defer.context_share", cls.context_share)),
            max_results=max(1, min(_MAX_RESULTS_CAP, int(config.get("tools.defer.max_results", cls.max_results)))),
        )


@dataclass
class DeferralStats:
    """What deferral did, for the request log and the benchmark."""

    requests: int = 0  # requests whose tools were planned
    deferred_requests: int = 0  # of them, requests with schemas deferred
    tokens_saved: int = 0  # schema tokens left out, summed over requests
    searches: int = 0
    calls: int = 0  # calls of deferred tools
    calls_after_search: int = 0  # of them, calls of a tool that a search had loaded
    cut: int = 0  # requests cut down to the provider's limit

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class _Plan:
    offered: list[dict[str, Any]]
    deferred: int = 0
    tokens_saved: int = 0


@dataclass
class ToolSearch:
    """One agent's deferral state: the deferred catalogue, what was loaded (in order), the counts."""

    loaded: list[str] = field(default_factory=list)
    stats: DeferralStats = field(default_factory=DeferralStats)
    active: bool = False
    last: _Plan | None = None
    _deferred: dict[str, Tool] = field(default_factory=dict)
    _searched: set[str] = field(default_factory=set)  # loaded through a search
    _room: int | None = None  # how many more tools the provider's limit leaves
    _max_results: int = 5
    _warned: set[str] = field(default_factory=set)
    _tool: Tool | None = None
    _full: tuple[tuple[int, ...], list[Tool], int] | None = None

    # --- the request ------------------------------------------------------------

    def plan(
        self,
        tools: Sequence[Tool],
        settings: DeferralSettings,
        *,
        context_length: int | None = None,
        max_tools: int | None = None,
        history: Iterable[Mapping[str, Any]] = (),
        record: bool = False,
        provider: str = "the provider",
    ) -> list[dict[str, Any]]:
        """The tool schemas one request offers, deferring and cutting to ``max_tools`` as needed.

        ``record`` counts the request in :attr:`stats` (a real request, not an estimate).
        """
        deferrable = [t for t in tools if t.deferrable]
        over = len(tools) > settings.min_tools or (max_tools is not None and len(tools) > max_tools)
        full = self._full_tokens(tools) if deferrable or record else 0
        if not over and context_length and deferrable:
            over = full > settings.context_share * context_length
        wanted = bool(deferrable) and settings.mode != "never" and (settings.mode == "always" or over)
        clash = any(t.name == TOOL_SEARCH for t in tools)
        if wanted and clash:
            self._warn("clash", f"a tool is already named {TOOL_SEARCH!r}: tool schemas cannot be deferred")
        self.active = wanted and not clash
        self._max_results = settings.max_results
        if not self.active:
            offered = self._cut([t.schema() for t in tools], max_tools, provider, record)
            cut = len(offered) < len(tools)
            plan = _Plan(offered, tokens_saved=max(0, full - schema_tokens(offered)) if record and cut else 0)
        else:
            self._deferred = {t.name: t for t in deferrable}
            self._restore(history)  # a resumed or switched-to session: the deferred tools it called
            kept = self._cut([t.schema() for t in tools if not t.deferrable], None if max_tools is None else max_tools - 1,
                             provider, record)  # fmt: skip
            loaded = [self._deferred[n].schema() for n in self.loaded if n in self._deferred]
            if max_tools is not None:
                self._room = max(0, max_tools - 1 - len(kept) - len(loaded))
                loaded = loaded[: max(0, max_tools - 1 - len(kept))]
            offered = [*kept, self.tool.schema(), *loaded]
            plan = _Plan(offered, deferred=len(deferrable) - len(loaded), tokens_saved=max(0, full - schema_tokens(offered)))
        if record:
            self.stats.requests += 1
            self.stats.deferred_requests += int(self.active)
            self.stats.tokens_saved += plan.tokens_saved
            self.last = plan
        return plan.offered

    def _full_tokens(self, tools: Sequence[Tool]) -> int:
        """Tokens of every schema; kept while the tools are the same objects (a source's cached list)."""
        key = tuple(map(id, tools))
        if self._full is None or self._full[0] != key:
            self._full = (key, list(tools), schema_tokens([t.schema() for t in tools]))  # the list pins the ids
        return self._full[2]

    def _cut(self, schemas: list[dict[str, Any]], limit: int | None, provider: str, record: bool) -> list[dict[str, Any]]:
        if limit is None or len(schemas) <= limit:
            return schemas
        if record:
            self.stats.cut += 1
        self._warn("limit", f"{len(schemas)} tools are on offer but {provider} accepts at most {limit} in one request: "
                            f"only the first {limit} are sent (mark tools deferrable or set tools.defer.mode: auto)")  # fmt: skip
        return schemas[:limit]

    def _warn(self, key: str, text: str) -> None:
        if key not in self._warned:  # one line per agent, not one per request
            self._warned.add(key)
            log.warning("%s", text)

    def _restore(self, history: Iterable[Mapping[str, Any]]) -> None:
        """Load the deferred tools a resumed history already called, in the order it called them."""
        for message in history:
            for call in message.get("tool_calls") or ():
                name = (call.get("function") or {}).get("name") if isinstance(call, dict) else None
                if name in self._deferred and name not in self.loaded:
                    self.loaded.append(name)

    # --- the calls --------------------------------------------------------------

    def note_call(self, name: str) -> None:
        """Count a call; a deferred tool called without a search is loaded from now on."""
        if not self.active or name not in self._deferred:
            return
        self.stats.calls += 1
        if name in self._searched:
            self.stats.calls_after_search += 1
        if name not in self.loaded:
            self.loaded.append(name)

    @property
    def tool(self) -> Tool:
        """The ``tool_search`` tool; its description names how many tools wait and where from."""
        sources: dict[str, int] = {}
        for tool in self._deferred.values():
            sources[tool.toolset] = sources.get(tool.toolset, 0) + 1
        summary = ", ".join(f"{name} ({count})" for name, count in sorted(sources.items()))
        description = (
            f"Find tools by what they do and load them. {len(self._deferred)} more tools are available but not "
            f"loaded (toolsets: {summary or 'none'}). Search with a few words (an action, an object, a server "
            f"name) or 'select:name1,name2' for exact names; up to {self._max_results} matches are loaded and "
            "can be called from your next step on."
        )
        if self._tool is None or self._tool.description != description:
            self._tool = Tool(
                name=TOOL_SEARCH,
                description=description,
                parameters={
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "Words to match against tool names and descriptions."},
                        "max_results": {"type": "integer", "minimum": 1, "maximum": _MAX_RESULTS_CAP,
                                        "description": f"How many tools to load (default {self._max_results})."},
                    },
                    "required": ["query"],
                },
                handler=self._search,
                toolset="tool_search",
                read_only=True,
            )  # fmt: skip
        return self._tool

    def _search(self, args: dict[str, Any], ctx: ToolContext) -> str:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ToolError("tool_search needs `query`: a few words saying what the tool should do")
        limit = args.get("max_results", self._max_results)
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise ToolError(f"tool_search `max_results` must be a whole number from 1 to {_MAX_RESULTS_CAP}")
        self.stats.searches += 1
        found = rank_tools(query, list(self._deferred.values()), min(limit, _MAX_RESULTS_CAP))
        if not found:
            return f"No tools match {query!r}. Try other words: what the tool acts on, the action, or its server's name."
        fresh = [t for t in found if t.name not in self.loaded]
        if self._room is not None and len(fresh) > self._room:
            dropped, fresh = fresh[self._room :], fresh[: self._room]
            found = [t for t in found if t not in dropped]
        for tool in fresh:
            self.loaded.append(tool.name)
            if self._room is not None:
                self._room -= 1
        if not found:
            return f"No room for more tools: the provider's limit is reached by the {len(self.loaded)} already loaded."
        self._searched.update(t.name for t in found)
        lines = [f"Loaded {len(found)} tool{'s' if len(found) != 1 else ''}; call them on your next step:"]
        for tool in found:
            summary = " ".join(tool.description.split())
            if len(summary) > _DESCRIPTION_CHARS:
                summary = summary[: _DESCRIPTION_CHARS - 1] + "…"
            lines.append(f"- {tool.name}: {summary}")
        return "\n".join(lines)
