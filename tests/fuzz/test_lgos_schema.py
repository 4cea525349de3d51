"""Schemathesis over LGOS's own OpenAPI document, against a real ``lgos serve`` process.

Every operation, positive and negative data (NUL bytes included), a fixed seed and a bounded
number of examples per operation (``tests/support/fuzz.py``). Checks: no 5xx, only documented
statuses, the documented response shapes, and every error a valid OpenAI envelope.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import httpx
from schemathesis import Case

from tests.support.fuzz import assert_total, openapi_schema
from tests.support.servers import Server


def _document() -> dict[str, Any]:
    # The same app the server runs, built here only for its document (collection needs the
    # operations before any server starts); test_served_document_is_the_fuzzed_one checks it.
    from lgos import LGOSSettings, create_app
    from lgos_demo_graphs.registry import create_registry

    with tempfile.TemporaryDirectory() as state:
        return create_app(create_registry(), LGOSSettings(state_dir=Path(state))).openapi()


DOCUMENT = _document()
schema = openapi_schema(DOCUMENT)


def test_served_document_is_the_fuzzed_one(fuzzed_lgos: Server) -> None:
    assert httpx.get(f"{fuzzed_lgos.url}/openapi.json").json() == DOCUMENT


@schema.parametrize()
def test_lgos_routes_are_total(case: Case, fuzzed_lgos: Server) -> None:
    assert_total(case, fuzzed_lgos.url)
