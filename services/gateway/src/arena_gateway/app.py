"""The gateway's FastAPI app: guest sign-in, the caller's identity, and the WebSocket.

Routes get what they need by dependency injection (FastAPI's ``Depends``): the gateway from the
app's state, and the :class:`Principal` from the bearer token, so accounts (issue 5) only add a
way to obtain a token.
"""

from __future__ import annotations

from typing import Annotated

from arena_runtime.host import Service
from fastapi import Depends, FastAPI, Request, WebSocket, status
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel

from arena_gateway import refusals
from arena_gateway.gateway import Gateway
from arena_gateway.identity import Principal, PrincipalKind
from arena_gateway.read_api import create_read_router
from arena_gateway.refusals import refusal, within_budget
from arena_gateway.training import create_training_router

bearer = HTTPBearer(auto_error=False)


class GuestSession(BaseModel):
    """A new guest: keep the token, it is shown only once."""

    player_id: str
    name: str
    token: str


class Me(BaseModel):
    player_id: str
    name: str
    kind: PrincipalKind


class Health(BaseModel):
    status: str


class Readiness(BaseModel):
    status: str
    services: dict[str, bool]
    #: Still ready (200): what the services behind cannot do now, e.g. a command topic whose
    #: service answers nothing (docs/operations.md, "Health and metrics").
    degraded: dict[str, str] = {}


def get_gateway(request: Request) -> Gateway:
    gateway: Gateway = request.app.state.gateway
    return gateway


def client_address(request: Request) -> str:
    """The caller's address: the peer's, or the one a trusted proxy forwards (uvicorn's
    ``--forwarded-allow-ips``, from ``FORWARDED_ALLOW_IPS``)."""
    return request.client.host if request.client else "unknown"


Client = Annotated[str, Depends(client_address)]


async def get_principal(
    gateway: Annotated[Gateway, Depends(get_gateway)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> Principal:
    """The caller, from ``Authorization: Bearer <token>``; 401 without a live session."""
    principal = None
    if credentials is not None:
        principal = await gateway.sessions.resolve(credentials.credentials)
    if principal is None:
        raise refusal(
            status.HTTP_401_UNAUTHORIZED,
            "unauthenticated",
            "a valid bearer token is required",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return principal


def create_app(service: Service, gateway: Gateway) -> FastAPI:
    app = FastAPI(
        title="Arena gateway",
        version="0.1.0",
        description="HTTP API of Arena. The game protocol is the WebSocket at /v1/ws "
        "(docs/protocol.md, docs/asyncapi.yaml).",
    )
    app.state.gateway = gateway
    refusals.install(app)
    app.include_router(create_read_router(get_principal))
    app.include_router(create_training_router(get_principal, get_gateway))

    @app.get("/healthz", tags=["probes"])
    async def healthz() -> Health:
        """The process is alive (the host answers this before the app)."""
        return Health(status="alive")

    @app.get("/readyz", tags=["probes"], responses={503: {"model": Readiness}})
    async def readyz() -> JSONResponse:
        """Caught up with the log and reading every partition of the event topics."""
        ready = service.ready()
        degraded = service.degraded()
        status_ = "catching up" if not ready else "degraded" if degraded else "ready"
        body = Readiness(status=status_, services={service.name: ready}, degraded=degraded)
        return JSONResponse(body.model_dump(), status_code=200 if ready else 503)

    @app.post(
        "/v1/guests",
        status_code=status.HTTP_201_CREATED,
        tags=["identity"],
        responses=refusals.documented(429),
    )
    async def create_guest(
        gateway: Annotated[Gateway, Depends(get_gateway)], client: Client
    ) -> GuestSession:
        """A new guest player with a ``Guest_XXXX`` name and a session token. Each address may
        create ``ARENA_GUEST_RATE`` guests a second (429 beyond)."""
        settings = gateway.settings
        key, rate, burst = f"guest:addr:{client}", settings.guest_rate, settings.guest_burst
        await within_budget(gateway.cache, key, rate, burst, "too many guests from this address")
        principal, token = await gateway.sessions.new_guest()
        return GuestSession(player_id=principal.player_id, name=principal.name, token=token)

    @app.get("/v1/me", tags=["identity"])
    async def me(principal: Annotated[Principal, Depends(get_principal)]) -> Me:
        """Who the bearer token belongs to."""
        return Me(player_id=principal.player_id, name=principal.name, kind=principal.kind)

    @app.websocket("/v1/ws")
    async def websocket(websocket: WebSocket) -> None:
        await websocket.app.state.gateway.serve(websocket)

    return app
