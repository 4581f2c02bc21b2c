"""Errors in OpenAI's shape: ``{"error": {"message", "type", "param", "code"}}`` with the right status."""

from __future__ import annotations

from typing import Any

__all__ = ["RequestError", "error_body"]

_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 402: "insufficient_quota",
          404: "invalid_request_error", 409: "invalid_request_error", 413: "invalid_request_error", 429: "rate_limit_error",
          500: "server_error", 502: "server_error", 503: "server_error"}  # fmt: skip


def error_body(status: int, message: str, *, code: str | None = None, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": _TYPES.get(status, "invalid_request_error"), "param": param, "code": code}}


class RequestError(Exception):
    """A request the server answers with an error: status, message, code, param and extra headers."""

    def __init__(self, message: str, *, status: int = 400, code: str | None = None, param: str | None = None,
                 headers: dict[str, str] | None = None) -> None:  # fmt: skip
        super().__init__(message)
        self.status = status
        self.code = code
        self.param = param
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return error_body(self.status, str(self), code=self.code, param=self.param)
