"""The HTTP API against its own OpenAPI document, property-based (schemathesis), on a real
`arena serve`: for requests the document allows and requests it does not, every answer's status,
headers, content type and body are ones the document declares (schemathesis' default checks).

A fixed number of examples per operation and mode, derandomized: the same requests every run.
Requests carry a guest's token; the operations that end the session they are called with (sign
out, upgrade) get a fresh guest's for each request.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.config import SchemathesisConfig

from tests.processes.arena_process import ArenaProcess, serving

EXAMPLES = 10
#: Operations that end the caller's session.
SPENDS_TOKEN = {"DELETE /v1/sessions/current", "POST /v1/accounts/upgrade"}
#: A cursor is opaque: one well formed but never handed out is refused with the documented 400.
#: Credits are their owner's: another player's are refused with the documented 403.
CONFIG = SchemathesisConfig.from_str(
    """
[[operations]]
include-path-regex = "/(players/[^/]+/matches|leaderboards/[^/]+)$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "404"]

[[operations]]
include-path-regex = "/players/[^/]+/credits(/ledger)?$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404"]
"""
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArenaProcess]:
    with serving(
        tmp_path_factory.mktemp("conformance"),
        ARENA_LOG_LEVEL="WARNING",
        ARENA_REGISTER_BURST="100000",
        ARENA_SIGN_IN_BURST="100000",
        ARENA_SERVE_PROJECTIONS="inline",
    ) as process:
        yield process


def test_the_api_answers_as_documented(server: ArenaProcess) -> None:
    api = schemathesis.openapi.from_url(server.url + "/openapi.json", config=CONFIG)
    http = httpx.Client(base_url=server.url)
    shared = http.post("/v1/guests").json()["token"]

    @api.auth(refresh_interval=None)
    class GuestToken:
        """A guest's bearer token, wherever the document asks for one (schemathesis leaves it
        off where it tests the refusal of a missing one)."""

        def get(self, case: schemathesis.Case, ctx: schemathesis.AuthContext) -> str:
            if case.operation.label in SPENDS_TOKEN:
                return str(http.post("/v1/guests").json()["token"])
            return str(shared)

        def set(self, case: schemathesis.Case, data: str, ctx: schemathesis.AuthContext) -> None:
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {data}"}

    failures: dict[str, str] = {}
    answered: dict[str, set[int]] = {}
    operations = [found.ok() for found in api.get_all_operations()]
    assert len(operations) >= 15  # the walk sees the whole API
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(mode))
            @settings(
                max_examples=EXAMPLES,
                derandomize=True,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def conforms(case: schemathesis.Case) -> None:
                response = case.call_and_validate()
                answered.setdefault(case.operation.label, set()).add(response.status_code)

            try:
                conforms()
            except Unsatisfiable:
                pass  # no request the document forbids (an operation without parameters)
            except BaseException as exc:  # schemathesis reports a BaseExceptionGroup
                failures[f"{operation.label} ({mode.value})"] = str(exc)
    assert not failures, "\n\n".join(f"{where}:\n{what}" for where, what in failures.items())
    # The token went where it is needed: private routes answered, not only refused.
    assert 200 in answered["GET /v1/me"] and 200 in answered["GET /v1/sessions"], answered
