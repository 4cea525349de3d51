"""Hostile bytes and JSON against a real LGOS on PostgreSQL and Redis: always a 4xx envelope.

Hypothesis properties over raw bodies (invalid UTF-8 included), arbitrary JSON (NUL characters,
control characters, long strings, huge numbers, deep nesting) and path segments; and the
regression tests for what the fuzzers found.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.envelopes import assert_client_error
from tests.support.fuzz import HTTP_EXAMPLES, fuzz
from tests.support.hostile_json import json_values
from tests.support.servers import Server

MODELS = ["simple-graph", "interruptible-approval", "background-report", "server-tools", "none"]


@pytest.fixture(scope="module")
def http(fuzzed_lgos: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=fuzzed_lgos.url, timeout=30) as client:
        yield client


def assert_total(response: httpx.Response) -> None:
    if response.status_code < 400:
        assert response.status_code == 200
        return
    assert_client_error(response)


fields = st.sampled_from(
    [
        "input",
        "messages",
        "tools",
        "tool_choice",
        "metadata",
        "instructions",
        "stream",
        "background",
        "store",
        "include",
        "previous_response_id",
        "text",
        "user",
    ]
)
bodies = st.fixed_dictionaries(
    {"model": st.sampled_from(MODELS)}, optional={"input": json_values}
).flatmap(
    lambda base: st.dictionaries(fields, json_values, max_size=4).map(lambda b: {**base, **b})
)


@fuzz(HTTP_EXAMPLES)
@given(route=st.sampled_from(["/v1/responses", "/v1/chat/completions"]), body=bodies)
def test_any_json_body_is_answered_without_a_server_error(
    http: httpx.Client, route: str, body: dict[str, Any]
) -> None:
    body["stream"] = False  # a stream's status is 200 before the graph runs; see the schema fuzz
    assert_total(http.post(route, json=body))


@fuzz(HTTP_EXAMPLES)
@given(
    route=st.sampled_from(["/v1/responses", "/v1/chat/completions"]), raw=st.binary(max_size=256)
)
def test_any_byte_body_is_a_400(http: httpx.Client, route: str, raw: bytes) -> None:
    response = http.post(route, content=raw, headers={"content-type": "application/json"})
    if response.status_code != 200:  # a few byte strings are valid requests
        assert_client_error(response)


@fuzz(HTTP_EXAMPLES)
@given(
    template=st.sampled_from(["/v1/models/{}", "/v1/responses/{}", "/v1/responses/{}/cancel"]),
    segment=st.text(st.characters(codec="utf-8"), min_size=1, max_size=300),
)
def test_any_path_segment_is_a_404(http: httpx.Client, template: str, segment: str) -> None:
    path = template.format(quote(segment, safe=""))
    method = "POST" if path.endswith("/cancel") else "GET"
    response = http.request(method, path)
    if segment in MODELS and template == "/v1/models/{}":
        assert response.status_code == 200
        return
    error = assert_client_error(response)
    assert response.status_code == 404, error


NUL_CASES: list[tuple[dict[str, Any], str]] = [
    # Found by the fuzzers: PostgreSQL text and jsonb hold no U+0000, so these were 500s once the
    # background record or the interrupt checkpoint was written.
    ({"model": "background-report", "input": "a\x00b", "background": True}, "input"),
    ({"model": "background-report", "input": "x", "background": True, "user": "\x00"}, "user"),
    (
        {
            "model": "background-report",
            "input": "x",
            "background": True,
            "metadata": {"k\x00": "v"},
        },
        "metadata.k\\u0000",
    ),
    ({"model": "interruptible-approval", "input": "ship\x00it"}, "input"),
    (
        {"model": "interruptible-approval", "input": [{"role": "user", "content": "\x00"}]},
        "input[0].content",
    ),
    (
        {"model": "simple-graph", "messages": [{"role": "user", "content": "\x00"}]},
        "messages[0].content",
    ),
]


@pytest.mark.parametrize(("body", "param"), NUL_CASES)
def test_nul_characters_are_400s_naming_the_param(
    http: httpx.Client, body: dict[str, Any], param: str
) -> None:
    route = "/v1/chat/completions" if "messages" in body else "/v1/responses"
    error = assert_client_error(http.post(route, json=body))
    assert error["param"] == param
    assert error["code"] == "invalid_value"


@pytest.mark.parametrize("segment", ["resp_%00", "%ff%fe", "x" * 5000, "resp_lg_%00_%00"])
def test_malformed_response_ids_are_404s_without_a_lookup(http: httpx.Client, segment: str) -> None:
    for method, path in (
        ("GET", f"/v1/responses/{segment}"),
        ("POST", f"/v1/responses/{segment}/cancel"),
    ):
        response = http.request(method, path)
        assert response.status_code == 404
        assert "\x00" not in assert_client_error(response)["message"]


def test_background_create_with_store_false_lands_in_postgres(http: httpx.Client) -> None:
    body = {"model": "background-report", "input": "kept", "background": True, "store": False}
    created = http.post("/v1/responses", json=body)
    assert created.status_code == 200, created.text
    snapshot = http.get(f"/v1/responses/{created.json()['id']}")
    assert snapshot.status_code == 200
    assert snapshot.json()["store"] is False
