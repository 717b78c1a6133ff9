"""One shape for every refusal of the HTTP API, ``{"detail": {"code", "message"}}``, and an
OpenAPI document that says so for every answer a route can give.

Routes raise :func:`refusal`; FastAPI's own refusals (a body that does not validate, a path that
does not exist, a method not allowed) are turned into the same shape by the handlers
:func:`install` adds. The document is completed in one place too: every operation that takes a
bearer token lists 401, every one with parameters or a body lists 422 and every one with a body
400, each with this shape, so no route can forget one.
"""

from __future__ import annotations

import math
import time
from typing import Any

from arena_runtime import telemetry
from arena_runtime.cache import Cache, CacheUnavailableError
from fastapi import FastAPI, HTTPException, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

#: OpenAPI ``responses`` entries, typed as FastAPI's parameters take them.
Responses = dict[int | str, dict[str, Any]]

#: The code of a refusal FastAPI or Starlette raised with a bare message.
_CODES = {
    400: "bad_request",
    401: "unauthenticated",
    404: "not_found",
    405: "method_not_allowed",
    422: "invalid_request",
    429: "rate_limited",
    503: "unavailable",
}
#: Fields whose validation failure has a code of its own (the accounts API's, documented).
FIELD_CODES = {"username": "invalid_username", "password": "invalid_password"}
_DESCRIPTIONS = {
    400: "The body is not JSON",
    401: "No valid bearer token",
    422: "A parameter or the body is not what this document describes",
    503: "A service the answer needs cannot be reached for now (the cache); try again shortly",
}
#: One WARNING a minute at most while the cache is down: every request would say it again.
WARNING_EVERY_SECONDS = 60.0
_warned = {"at": float("-inf")}

log = telemetry.get_logger(__name__)


class ErrorDetail(BaseModel):
    code: str = Field(description="Stable, for programs", examples=["player_not_found"])
    message: str = Field(description="For people")


class ApiError(BaseModel):
    """Every refusal (FastAPI's shape: everything under ``detail``)."""

    detail: ErrorDetail


def refusal(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> HTTPException:
    return HTTPException(status, {"code": code, "message": message}, headers=headers)


async def within_budget(cache: Cache, key: str, rate: float, burst: float, what: str) -> None:
    """Take one from the cache's token bucket ``key``; 429 ``rate_limited`` (with the wait in
    ``Retry-After``) when it is empty. ``what`` says what was asked too often, for people."""
    if not await cache.allow(key, rate, burst):
        raise refusal(
            429, "rate_limited", f"{what}; wait", headers={"Retry-After": str(math.ceil(1 / rate))}
        )


def documented(*statuses: int, description: str | None = None) -> Responses:
    """``responses`` entries for refusals a route gives besides the ones added to every route."""
    return {
        status: {"model": ApiError, **({"description": description} if description else {})}
        for status in statuses
    }


def _body(code: str, message: str) -> dict[str, Any]:
    return {"detail": {"code": code, "message": message}}


async def _http_refusal(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    detail = exc.detail
    if isinstance(detail, dict) and {"code", "message"} <= set(detail):
        body = {"detail": detail}
    else:
        body = _body(_CODES.get(exc.status_code, "refused"), str(detail))
    return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)


async def _unavailable(request: Request, exc: Exception) -> JSONResponse:
    """The cache (Redis) is unreachable: a typed 503 to retry, a WARNING for the operator, no
    traceback (it is an outage, not a bug)."""
    now = time.monotonic()
    if now - _warned["at"] >= WARNING_EVERY_SECONDS:
        _warned["at"] = now
        log.warning(
            "the cache cannot be reached: sign-ins and sessions answer 503 until it is back. "
            "Check Redis (ARENA_REDIS_URL; docs/operations.md#redis-is-flushed)",
            error=str(exc),
            path=request.url.path,
        )
    return JSONResponse(
        _body(_CODES[503], "a service this needs is unavailable; try again shortly"),
        status_code=503,
        headers={"Retry-After": "1"},
    )


async def _invalid_request(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    first = jsonable_encoder(exc.errors()[0]) if exc.errors() else {}
    location = [str(part) for part in first.get("loc", [])]
    field = location[-1] if location else ""
    where = ".".join(location) or "request"
    code = FIELD_CODES.get(field, _CODES[422]) if location[:1] == ["body"] else _CODES[422]
    return JSONResponse(_body(code, f"{where}: {first.get('msg', 'invalid')}"), status_code=422)


def _complete(schema: dict[str, Any]) -> dict[str, Any]:
    """Every operation's refusals, in the one shape; FastAPI's own error schemas dropped."""
    error = {"$ref": "#/components/schemas/ApiError"}
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components["ApiError"] = ApiError.model_json_schema(ref_template="#/components/schemas/{model}")
    components.update(components["ApiError"].pop("$defs", {}))
    for name in ("HTTPValidationError", "ValidationError"):
        components.pop(name, None)
    for path, operations in schema.get("paths", {}).items():
        for operation in operations.values():
            # Every /v1 route asks the cache (sessions, limits); the probes never do.
            statuses = [503] if path.startswith("/v1/") else []
            if operation.get("security"):
                statuses.append(401)
            if operation.get("parameters") or operation.get("requestBody"):
                statuses.append(422)
            if operation.get("requestBody"):
                statuses.append(400)
            responses = operation.setdefault("responses", {})
            for status in statuses:
                answer = responses.setdefault(str(status), {"description": _DESCRIPTIONS[status]})
                answer["content"] = {"application/json": {"schema": error}}
    return schema


def install(app: FastAPI) -> None:
    """Refusals in one shape, and an OpenAPI document that lists them all."""
    app.add_exception_handler(StarletteHTTPException, _http_refusal)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(CacheUnavailableError, _unavailable)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = _complete(
                get_openapi(
                    title=app.title,
                    version=app.version,
                    description=app.description,
                    routes=app.routes,
                )
            )
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
