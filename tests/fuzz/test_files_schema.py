"""Schemathesis over the Files service's OpenAPI document, against a real ``files-service``.

Every operation with positive and negative data (NUL bytes included), the test key, a fixed
seed and bounded examples (``tests/support/fuzz.py``): no 5xx, documented statuses only, and
every error a valid OpenAI envelope.
"""

from __future__ import annotations

from typing import Any

import httpx
from files_service.app import create_app
from files_service.settings import FilesSettings
from schemathesis import Case

from tests.support.files import API_KEY, FilesProcess
from tests.support.fuzz import assert_total, openapi_schema

AUTH = {"Authorization": f"Bearer {API_KEY}"}
# Built without a database: the document needs none (the served one is checked to match).
DOCUMENT: dict[str, Any] = create_app(FilesSettings(postgres_uri="postgresql://unused/x")).openapi()
schema = openapi_schema(DOCUMENT)


def test_served_document_is_the_fuzzed_one(files_process: FilesProcess) -> None:
    assert httpx.get(f"{files_process.server.url}/openapi.json").json() == DOCUMENT


@schema.parametrize()
def test_files_routes_are_total(case: Case, files_process: FilesProcess) -> None:
    assert_total(case, files_process.server.url, headers=AUTH)
