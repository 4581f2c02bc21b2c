"""``python -m bench mcp`` runs and reports both clients (speed itself is judged in bench/, not here)."""

from __future__ import annotations

import pytest

from bench import mcp

pytestmark = pytest.mark.slow


def test_mcp_benchmark_reports_both_clients_and_their_ratio() -> None:
    result = mcp.run(runs=3, calls=5, big_mb=0.2)
    assert result["runs"] == 3 and result["calls_per_run"] == 5
    assert result["sdk_ms_per_call"] > 0 and result["hermes_ms_per_call"] > 0
    assert abs(result["ratio"] - result["hermes_ms_per_call"] / result["sdk_ms_per_call"]) < 0.01
    deferred = result["deferred_tools"]  # request tokens with 1,000 tools: behind tool_search against all sent
    assert deferred["tools"] == 1000 and deferred["tools_offered_deferred"] == 1  # only tool_search
    assert deferred["request_tokens_all_schemas"] > 50 * deferred["request_tokens_deferred"]
    assert deferred["ratio_deferred"] == round(deferred["request_tokens_deferred"] / deferred["request_tokens_all_schemas"], 4)
    assert 1 < deferred["tools_offered_after_search"] <= 128
    assert deferred["search_found"][0].startswith("- mcp_many_close_invoice_")
    assert result["big_result_chars"] == 200_000 and result["sdk_big_seconds"] > 0 and result["hermes_big_seconds"] > 0
    assert result["big_target_ratio"] == 1.5
