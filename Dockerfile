# One image for every Arena service; the command picks the service:
#   docker run arena gateway | match | matchmaking | rating | projections | serve
FROM python:3.11-slim AS build
ENV UV_LINK_MODE=copy UV_COMPILE_BYTECODE=1 UV_PYTHON_DOWNLOADS=never
RUN pip install --no-cache-dir uv==0.13.9
WORKDIR /app
# Dependencies first, from the lock alone, so code changes reuse this layer.
COPY pyproject.toml uv.lock ./
COPY libs/engine/pyproject.toml libs/engine/
COPY libs/runtime/pyproject.toml libs/runtime/
COPY libs/games/pyproject.toml libs/games/
COPY services/gateway/pyproject.toml services/gateway/
COPY services/match/pyproject.toml services/match/
COPY services/matchmaking/pyproject.toml services/matchmaking/
COPY services/rating/pyproject.toml services/rating/
COPY services/cli/pyproject.toml services/cli/
RUN uv sync --frozen --no-dev --no-install-workspace
COPY libs libs
COPY services services
RUN uv sync --frozen --no-dev
# The web client's wire types come from the gateway's own OpenAPI document (docs/client.md).
COPY docs/asyncapi.yaml docs/
RUN .venv/bin/python services/gateway/web/scripts/openapi.py

# The web client, built as `make install` builds it; only its dist/ reaches the image.
FROM node:20-slim AS web
WORKDIR /app
COPY services/gateway/web/package.json services/gateway/web/package-lock.json services/gateway/web/
RUN npm ci --prefix services/gateway/web --no-audit --no-fund
COPY --from=build /app/docs docs
COPY --from=build /app/services/gateway/web services/gateway/web
RUN npm run --prefix services/gateway/web build

FROM python:3.11-slim
RUN useradd --create-home --uid 10001 arena
COPY --from=build /app /app
COPY --from=web /app/services/gateway/web/dist /app/services/gateway/web/dist
ENV PATH=/app/.venv/bin:$PATH \
    ARENA_HTTP_HOST=0.0.0.0 \
    ARENA_HTTP_PORT=8000 \
    ARENA_DATA_DIR=/home/arena/var
USER arena
WORKDIR /home/arena
EXPOSE 8000
ENTRYPOINT ["arena"]
CMD ["serve"]
