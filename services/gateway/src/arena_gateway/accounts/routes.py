"""The accounts HTTP API: register, upgrade a guest, sign in, list and end sessions.

Refusals are ``{"detail": {"code": ..., "message": ...}}`` (:mod:`arena_gateway.refusals`)
with the status of :mod:`arena_gateway.accounts.errors`. Routes that act on a session take the
caller from the bearer token like every other route (``get_principal``), so a caller can only
ever name their own sessions.
"""

from __future__ import annotations

import math
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Path, Request, Response, status
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import BaseModel, Field

from arena_gateway.accounts.credentials import (
    ACCEPTED_USERNAME,
    MAX_PASSWORD,
    MAX_USERNAME,
    MIN_PASSWORD,
    MIN_USERNAME,
)
from arena_gateway.accounts.errors import STATUS, AccountError
from arena_gateway.accounts.service import Accounts, SignedIn
from arena_gateway.app import Client, bearer, get_principal
from arena_gateway.identity import Principal
from arena_gateway.refusals import documented, refusal


class Credentials(BaseModel):
    """A username and a password, as registration accepts them (a sign-in that could never
    succeed is refused alike). The pattern is checked by the accounts service, so that a
    reserved name has a code of its own (``username_reserved``)."""

    username: str = Field(
        min_length=MIN_USERNAME,
        max_length=MAX_USERNAME,
        examples=["alice"],
        json_schema_extra={"pattern": ACCEPTED_USERNAME},
    )
    password: str = Field(
        min_length=MIN_PASSWORD, max_length=MAX_PASSWORD, examples=["correct horse battery"]
    )


class Session(BaseModel):
    """A signed-in session: keep the token, it is shown only once."""

    player_id: str
    username: str
    session_id: str
    token: str
    expires_at_ms: int


class OpenSession(BaseModel):
    session_id: str
    expires_at_ms: int | None
    current: bool


def get_accounts(request: Request) -> Accounts:
    accounts: Accounts = request.app.state.accounts
    return accounts


AccountsDep = Annotated[Accounts, Depends(get_accounts)]
Caller = Annotated[Principal, Depends(get_principal)]
Token = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]

router = APIRouter(tags=["accounts"])


def _refused(exc: AccountError) -> HTTPException:
    wait = exc.retry_after
    headers = {"Retry-After": str(max(1, math.ceil(wait)))} if wait is not None else None
    return refusal(exc.status, exc.code.value, exc.message, headers=headers)


def _session(signed_in: SignedIn) -> Session:
    p = signed_in.principal
    return Session(
        player_id=p.player_id,
        username=p.name,
        session_id=p.session_id,
        token=signed_in.token,
        expires_at_ms=signed_in.expires_at_ms,
    )


@router.post(
    "/v1/accounts",
    status_code=status.HTTP_201_CREATED,
    responses=documented(409, 422, 429, 503),
)
async def register(body: Credentials, client: Client, accounts: AccountsDep) -> Session:
    """Create an account and sign it in. Usernames are unique whatever their case; each
    address may register ``ARENA_REGISTER_RATE`` accounts a second (429 beyond)."""
    try:
        return _session(await accounts.register(body.username, body.password, client))
    except AccountError as exc:
        raise _refused(exc) from None


@router.post(
    "/v1/accounts/upgrade",
    status_code=status.HTTP_201_CREATED,
    responses=documented(401, 409, 422, 429, 503),
)
async def upgrade(
    body: Credentials, caller: Caller, token: Token, client: Client, accounts: AccountsDep
) -> Session:
    """Turn the calling guest into an account with the same player id; the guest token ends and
    its open WebSockets are closed (``upgraded``). Limited like registration."""
    assert token is not None  # get_principal has refused a call without one
    try:
        return _session(
            await accounts.upgrade(caller, token.credentials, body.username, body.password, client)
        )
    except AccountError as exc:
        raise _refused(exc) from None


@router.post(
    "/v1/sessions", status_code=status.HTTP_201_CREATED, responses=documented(401, 429, 503)
)
async def sign_in(body: Credentials, client: Client, accounts: AccountsDep) -> Session:
    """Sign in. A wrong password and an unknown username get the same 401; both are limited."""
    try:
        return _session(await accounts.sign_in(body.username, body.password, client))
    except AccountError as exc:
        raise _refused(exc) from None


@router.get("/v1/sessions", responses=documented(401))
async def list_sessions(caller: Caller, accounts: AccountsDep) -> list[OpenSession]:
    """The caller's own open sessions."""
    return [OpenSession(**s) for s in await accounts.open_sessions(caller)]


@router.delete(
    "/v1/sessions/current",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=documented(401, 503),
)
async def sign_out(caller: Caller, token: Token, accounts: AccountsDep) -> Response:
    """Sign out: the token is refused from now on, by every gateway instance, and its open
    WebSockets are closed (``signed_out``)."""
    assert token is not None
    try:
        await accounts.sign_out(caller, token.credentials)
    except AccountError as exc:
        raise _refused(exc) from None
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.delete(
    "/v1/sessions/{session_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=documented(401, 404, 503),
)
async def end_session(
    session_id: Annotated[str, Path(pattern=r"^s_[0-9a-f]{16,64}$")],
    caller: Caller,
    accounts: AccountsDep,
) -> Response:
    """End another of the caller's own sessions (another device); nobody else's. Its open
    WebSockets are closed (``session_ended``)."""
    try:
        await accounts.close_session(caller, session_id)
    except AccountError as exc:
        raise _refused(exc) from None
    return Response(status_code=status.HTTP_204_NO_CONTENT)


__all__ = ["STATUS", "router"]
