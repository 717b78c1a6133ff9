"""No secret reaches the output of a real `arena serve` at DEBUG: not a session token (in a query
string, a bearer header, an auth frame or a browser's cookie), not a password (right or wrong),
not the password in the database or Redis URL it was started with, nor one in a bad setting it
refuses.

Every secret is random, and the whole output is searched for every run of 10 of its characters,
so a token cut short (websockets abbreviates long frames at DEBUG) is caught as well as a whole.
"""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import make_url
from websockets.sync.client import connect

from tests.harness.postgres import _admin
from tests.harness.redis import _wait_ready
from tests.harness.support import run_sync
from tests.processes.arena_process import ArenaProcess, arena_env, free_port, run_to_exit

WINDOW = 10
EXIT_BAD_CONFIG = 2


def leaks(output: str, secret: str) -> list[str]:
    """The runs of WINDOW characters of ``secret`` found in ``output``."""
    runs = {secret[i : i + WINDOW] for i in range(max(1, len(secret) - WINDOW + 1))}
    return sorted(run for run in runs if run in output)


def new_secret() -> str:
    return secrets.token_urlsafe(18)


@pytest.fixture
def redis_with_password(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(URL with the password, the password) of a Redis server of our own that requires one."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not on PATH")
    password, port = new_secret(), free_port()
    args = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    args += ["--dir", str(tmp_path), "--requirepass", password]
    process = subprocess.Popen([binary, *args], stdout=subprocess.DEVNULL)
    url = f"redis://:{password}@127.0.0.1:{port}/0"
    try:
        _wait_ready(url, process)
        yield url, password
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def database_with_password(postgres_url: str) -> Iterator[tuple[str, str]]:
    """(URL with a password, the password) of a database of our own on the test server. The
    server trusts local users (tests/harness/postgres.py) and so takes any password; one that
    needs a password has given it in ARENA_TEST_POSTGRES, and that one is the secret."""
    server = make_url(postgres_url)
    password = server.password or new_secret()
    name = f"arena_secrets_{secrets.token_hex(4)}"
    run_sync(lambda: _admin(server, f'CREATE DATABASE "{name}"'))
    try:
        url = server.set(database=name, password=password)
        yield url.render_as_string(hide_password=False), str(password)
    finally:
        run_sync(lambda: _admin(server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.mark.postgres
@pytest.mark.redis
def test_no_secret_in_the_output_of_a_process_at_debug(
    tmp_path: Path,
    redis_with_password: tuple[str, str],
    database_with_password: tuple[str, str],
) -> None:
    redis_url, redis_password = redis_with_password
    database_url, database_password = database_with_password
    env = arena_env(
        tmp_path / "var",
        free_port(),
        ARENA_LOG_LEVEL="DEBUG",
        ARENA_LOG_FORMAT="json",
        ARENA_DATABASE_URL=database_url,
        ARENA_REDIS_URL=redis_url,
        ARENA_SERVE_PROJECTIONS="inline",  # one process, one output; the child logs alike
    )
    process = ArenaProcess(["serve"], env, tmp_path / "arena.log")
    found: dict[str, str] = {"database password": database_password, "redis": redis_password}
    try:
        process.wait_until("/readyz", 200)
        http = httpx.Client(base_url=process.url, timeout=10)
        password, wrong = new_secret(), new_secret()
        found |= {"password": password, "wrong password": wrong}
        body = {"username": "keeper", "password": password}
        account = http.post("/v1/accounts", json=body)
        assert account.status_code == 201, account.text
        found["account token"] = account.json()["token"]
        bad = http.post("/v1/sessions", json={"username": "keeper", "password": wrong})
        assert bad.status_code == 401
        signed_in = http.post("/v1/sessions", json=body).json()
        found["sign-in token"] = signed_in["token"]
        guest = http.post("/v1/guests").json()
        found["guest token"] = guest["token"]
        me = http.get("/v1/me", headers={"Authorization": f"Bearer {signed_in['token']}"})
        assert me.status_code == 200
        ws_url = process.url.replace("http://", "ws://") + "/v1/ws"
        with connect(f"{ws_url}?token={guest['token']}") as ws:
            ws.send(json.dumps({"type": "pong", "id": "1"}))
            assert json.loads(ws.recv())["type"] == "ack"
        with connect(ws_url) as ws:
            ws.send(json.dumps({"type": "auth", "id": "1", "token": account.json()["token"]}))
            assert json.loads(ws.recv())["type"] == "ack"
            reconnect = {"type": "reconnect", "id": "2", "player_id": "p_x", "token": "t"}
            ws.send(json.dumps({**reconnect, "token": signed_in["token"]}))
            assert json.loads(ws.recv())["type"] == "error"
        # A browser's session: the token in an HttpOnly cookie, on requests and the handshake.
        own_page = {"Origin": process.url, "X-Arena-Session": "cookie"}
        browser = http.post("/v1/guests", headers=own_page)
        found["cookie token"] = browser.cookies["arena_session"]
        cookie = {"Cookie": f"arena_session={found['cookie token']}", "Origin": process.url}
        with connect(ws_url, additional_headers=cookie) as ws:
            ws.send(json.dumps({"type": "pong", "id": "1"}))
            assert json.loads(ws.recv())["type"] == "ack"
        assert process.terminate() == 0
    finally:
        process.close()
    output = process.log_path.read_text(errors="replace")
    assert '"level": "debug"' in output and "[redacted]" in output  # DEBUG, and secrets met
    leaked = {
        what: [line for line in output.splitlines() if leaks(line, secret)][:3]
        for what, secret in found.items()
    }
    assert not any(leaked.values()), leaked


def test_no_secret_in_the_refusal_of_a_bad_setting(tmp_path: Path) -> None:
    password = new_secret()
    for variable, value in (
        ("ARENA_DATABASE_URL", f"mysql://arena:{password}@db/arena"),
        ("ARENA_REDIS_URL", f"http://:{password}@cache:6379/0"),
        ("ARENA_KAFKA_BOOTSTRAP", f"arena:{password}@kafka:9092"),
    ):
        result = run_to_exit(
            ["serve"], arena_env(tmp_path / "var", free_port(), **{variable: value})
        )
        assert result.returncode == EXIT_BAD_CONFIG and variable in result.stderr, result.stderr
        assert not leaks(result.stdout + result.stderr, password), result.stderr


@pytest.mark.redis
def test_no_secret_when_the_cache_refuses_the_password(
    tmp_path: Path, redis_with_password: tuple[str, str]
) -> None:
    url, password = redis_with_password
    wrong = new_secret()
    env = arena_env(
        tmp_path / "var",
        free_port(),
        ARENA_LOG_LEVEL="DEBUG",
        ARENA_REDIS_URL=url.replace(password, wrong),
    )
    result = run_to_exit(["serve"], env)
    assert result.returncode == EXIT_BAD_CONFIG and "ARENA_REDIS_URL" in result.stderr
    assert not leaks(result.stdout + result.stderr, wrong), result.stderr
