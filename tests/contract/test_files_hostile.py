"""Regressions from fuzzing the Files service: NUL characters and 405s (real process, raw HTTP)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support.files import API_KEY, FilesProcess


@pytest.fixture(scope="module")
def http(files_process: FilesProcess) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {API_KEY}"}
    with httpx.Client(base_url=files_process.server.url, headers=headers, timeout=30) as client:
        yield client


def error_of(response: httpx.Response, status: int) -> dict[str, str]:
    assert response.status_code == status, response.text
    error: dict[str, str] = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return error


@pytest.mark.parametrize(
    ("path", "param"),
    [
        ("/v1/vector_stores?after=a%00b", "after"),
        ("/v1/files?after=%00", "after"),
        ("/v1/files?purpose=assistants%00", "purpose"),
        ("/v1/vector_stores/vs_x/files?before=%00", "before"),
    ],
)
def test_nul_in_a_query_is_a_400_naming_it(http: httpx.Client, path: str, param: str) -> None:
    # Once a 500: the cursor reached a PostgreSQL text parameter.
    assert error_of(http.get(path), 400)["param"] == param


@pytest.mark.parametrize(
    "path", ["/v1/files/file-%00", "/v1/vector_stores/vs_%00", "/v1/files/%00/content"]
)
def test_nul_in_a_path_names_nothing(http: httpx.Client, path: str) -> None:
    assert error_of(http.get(path), 404)["code"] == "not_found"


def test_nul_in_a_json_body_is_a_400_and_stores_nothing(http: httpx.Client) -> None:
    before = http.get("/v1/vector_stores").json()["data"]
    error = error_of(http.post("/v1/vector_stores", json={"name": "kb\x00"}), 400)
    assert error["code"] == "invalid_value"
    assert http.get("/v1/vector_stores").json()["data"] == before


def test_405_lists_every_method_of_the_path(http: httpx.Client) -> None:
    response = http.request("PUT", "/v1/files/file-abc")
    error_of(response, 405)
    assert response.headers["allow"] == "DELETE, GET"
    assert http.request("PATCH", "/v1/vector_stores").headers["allow"] == "GET, POST"
