"""Write the gateway's OpenAPI document to src/gen/openapi.json, for scripts/gen-wire.mjs.

The document is the app's own (FastAPI builds it from the routes and their models), made without
starting anything: the routes are all it needs. Run by `make install` before the web build, and by
the suite before it type-checks the client.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from arena_gateway.accounts.setup import mount_accounts
from arena_gateway.app import create_app

OUT = Path(__file__).resolve().parents[1] / "src" / "gen" / "openapi.json"


def document() -> dict[str, Any]:
    none: Any = None  # the routes are read, never called
    app = create_app(none, none)
    mount_accounts(app, none)
    return app.openapi()


def write(out: Path = OUT) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document(), indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
