"""The stack's own observability: Prometheus scrapes every first-party ``/metrics`` and, with
DEVSTACK_WITH=phoenix, Phoenix receives the traces of LGOS; both are read back through their own
HTTP APIs after real SDK traffic, and Phoenix's page shows the run's trace in Chromium
(screenshots: .dev/screenshots/observability/)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from openai import OpenAI
from playwright.sync_api import Browser, expect

from tests.support.browser import screenshot_dir
from tests.support.devstack import detached_stack, pg_data_dir
from tests.support.eventually import eventually

LGOS_KEY = "sk-lgos-local-only"
QUESTION = "Search the web for LangGraph streaming modes."


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    # Neither UI nor the gateway: the SDK talks to LGOS itself.
    extra = {"DEVSTACK_SKIP": "open-webui,chainlit,gateway,mcp-db", "DEVSTACK_WITH": "phoenix"}
    with (
        pg_data_dir() as pg_data,
        detached_stack(tmp_path_factory.mktemp("observability"), pg_data, extra) as (env, out),
    ):
        assert f"Prometheus:      http://127.0.0.1:{env['PROMETHEUS_PORT']}" in out, out
        assert f"Phoenix traces:  http://127.0.0.1:{env['PHOENIX_PORT']}" in out, out
        yield env


@pytest.fixture(scope="module")
def research(stack: dict[str, str]) -> str:
    """One advanced-graph research request through the official SDK: its response id."""
    client = OpenAI(
        base_url=f"http://127.0.0.1:{stack['LGOS_PORT']}/v1", api_key=LGOS_KEY, max_retries=0
    )
    response = client.responses.create(
        model="advanced-graph", input=QUESTION, tools=[{"type": "web_search"}], timeout=120
    )
    assert [item.type for item in response.output][-1] == "message"
    return response.id


def promql(stack: dict[str, str], query: str) -> dict[str, float]:
    """An instant query's result: the ``job`` label of each series -> its value."""
    answer = httpx.get(
        f"http://127.0.0.1:{stack['PROMETHEUS_PORT']}/api/v1/query",
        params={"query": query},
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["status"] == "success", body
    return {r["metric"].get("job", ""): float(r["value"][1]) for r in body["data"]["result"]}


def test_prometheus_scrapes_every_first_party_service(stack: dict[str, str]) -> None:
    every = {"lgos": 1.0, "lgos-2": 1.0, "lgos-worker": 1.0, "files": 1.0}
    seen: list[dict[str, float]] = []

    def all_up() -> dict[str, float] | None:
        # Prometheus starts beside them: the first scrape of a later one may find it down.
        seen.append(promql(stack, "up"))
        return seen[-1] if seen[-1] == every else None

    try:
        eventually(all_up, "all four targets up", timeout=30)
    except AssertionError:
        raise AssertionError(f"Prometheus's targets stayed {seen[-1]}") from None


def test_prometheus_counts_the_sdk_request_on_the_instance_that_served_it(
    stack: dict[str, str], research: str
) -> None:
    query = 'sum by (job) (http_server_requests_total{method="POST",route="/v1/responses"})'
    counted = eventually(
        lambda: found if (found := promql(stack, query)).get("lgos", 0) > 0 else None,
        "the research request counted under job lgos",
    )
    assert counted["lgos"] >= 1
    # The second instance served none of it (the SDK asked the first one directly).
    assert counted.get("lgos-2", 0) == 0


def phoenix_get(stack: dict[str, str], path: str, **params: Any) -> Any:
    answer = httpx.get(f"http://127.0.0.1:{stack['PHOENIX_PORT']}{path}", params=params, timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()


def research_trace(stack: dict[str, str]) -> list[dict[str, Any]] | None:
    """The spans of the trace holding the research run, once its chat and tool spans are in."""
    answer = httpx.get(
        f"http://127.0.0.1:{stack['PHOENIX_PORT']}/v1/projects/lgos/spans",
        params={"limit": 500},
        timeout=10,
    )
    if answer.status_code == 404:  # no batch exported yet: the project does not exist
        return None
    assert answer.status_code == 200, answer.text
    spans = answer.json()["data"]
    runs = [s for s in spans if s["name"] == "invoke_workflow advanced-graph"]
    for run in runs:
        trace = [s for s in spans if s["context"]["trace_id"] == run["context"]["trace_id"]]
        names = {s["name"] for s in trace}
        if any(n.startswith("chat ") for n in names) and any(
            n.startswith("execute_tool ") for n in names
        ):
            return trace
    return None


def test_phoenix_holds_the_research_trace_with_its_chat_and_tool_spans(
    stack: dict[str, str], research: str
) -> None:
    # LGOS exports in batches: the project and its spans appear seconds after the run.
    trace = eventually(lambda: research_trace(stack), "the research trace in Phoenix")
    by_name = {s["name"]: s for s in trace}
    run = by_name["invoke_workflow advanced-graph"]
    server = by_name["POST /v1/responses"]
    assert run["parent_id"] == server["context"]["span_id"]
    chats = [s for s in trace if s["name"].startswith("chat ")]
    assert all(s["parent_id"] == run["context"]["span_id"] for s in chats)
    assert all(s["attributes"]["gen_ai.usage.input_tokens"] > 0 for s in chats)
    assert all(s["attributes"].get("service.name") in (None, "lgos") for s in trace)


def test_phoenix_shows_the_research_trace_in_the_browser(
    stack: dict[str, str], research: str, browser: Browser
) -> None:
    shots = screenshot_dir("observability")
    trace = eventually(lambda: research_trace(stack), "the research trace in Phoenix")
    trace_id = trace[0]["context"]["trace_id"]
    [project] = [p for p in phoenix_get(stack, "/v1/projects")["data"] if p["name"] == "lgos"]
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    base = f"http://127.0.0.1:{stack['PHOENIX_PORT']}"
    page.goto(f"{base}/projects")
    # The projects page lists the stack's project with its trace count; pick it as a person would.
    card = page.locator(f'a[href^="/projects/{project["id"]}"]')
    expect(card).to_contain_text("lgos", timeout=30_000)
    page.screenshot(path=str(shots / "01-projects.png"))
    card.click()
    # Its spans list: the request's server span (a metrics scrape is never traced).
    expect(page.get_by_text("POST /v1/responses").first).to_be_visible(timeout=30_000)
    expect(page.get_by_text("GET /metrics")).to_have_count(0)
    page.screenshot(path=str(shots / "02-project-lgos.png"))
    page.goto(f"{base}/projects/{project['id']}/traces/{trace_id}")
    for name in ("POST /v1/responses", "invoke_workflow advanced-graph"):
        expect(page.get_by_text(name, exact=True).first).to_be_visible(timeout=30_000)
    chat = next(s["name"] for s in trace if s["name"].startswith("chat "))
    tool = next(s["name"] for s in trace if s["name"].startswith("execute_tool "))
    expect(page.get_by_text(chat, exact=True).first).to_be_visible(timeout=30_000)
    expect(page.get_by_text(tool, exact=True).first).to_be_visible(timeout=30_000)
    page.screenshot(path=str(shots / "03-research-trace.png"))
    page.close()
