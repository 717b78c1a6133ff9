"""The gateway's FastAPI app. Later issues add the HTTP API and the WebSocket protocol here."""

from __future__ import annotations

from arena_runtime.host import Service
from fastapi import FastAPI
from fastapi.responses import JSONResponse


def create_app(service: Service) -> FastAPI:
    app = FastAPI(title="Arena gateway", version="0.1.0")

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "alive"}

    @app.get("/readyz")
    async def readyz() -> JSONResponse:
        ready = service.ready()
        body = {"status": "ready" if ready else "catching up", "services": {service.name: ready}}
        return JSONResponse(body, status_code=200 if ready else 503)

    return app
