"""The whole demo stack under ``docker-compose``, built here from local bases (not part of ``make
test``: ``make test-compose-stack``).

This checkout's engine builds every image compose.yaml builds on the local Python base and the
local stand-ins for its public images; ``docker-compose`` (v1, with compose.yaml rendered for it)
brings the LiteLLM and observability profiles up with compose.local.yaml on top and a copy of
.env.example holding test secrets (and every service exporting traces to the Phoenix container), on
the ports compose.yaml publishes (3000-3009, 3013, 3014, and 3016-3017 for the replicas: they must
be free). Then: every service healthy or its one-shot job done; the SDK examples through the
gateway (and LGOS's own port); Prometheus scraping every first-party service and Phoenix holding
one trace per request, gateway to Files; an advanced-graph save → review → approve → found, once
plainly and once with the LGOS container restarted while the review waits; a Chainlit and an Open
WebUI login and chat in Chromium; each container's user, read-only root and dropped capabilities as
compose.yaml says; last, ``--scale lgos=2`` and a review answered after the replica that paused it
is killed. ``docker-compose down -v`` at the end. Container logs, timings and memory go to
.dev/compose-stack/.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from lgos_stack.containers import bases, images
from lgos_stack.containers.engine import Engine, docker
from openai import OpenAI
from playwright.sync_api import Browser

from tests.support.advanced import answer_review, review_payload
from tests.support.browser import browser_user, chromium, screenshot_dir
from tests.support.compose_stack import Compose, busy_ports
from tests.support.containers import local_engine
from tests.support.eventually import eventually
from tests.support.servers import ROOT
from tests.support.ui_people import ChainlitUser, WebUIUser

pytestmark = pytest.mark.compose_stack
log = logging.getLogger(__name__)
PROFILES = ("litellm", "observability")
REPLICA_PORTS = (3016, 3017)
"""LGOS_HOST_PORTS for ``--scale lgos=2`` (compose.yaml's own example range starts at 3016)."""
PORTS = [*range(3000, 3010), 3013, 3014, *REPLICA_PORTS]
"""What compose.yaml publishes (gateway 3000 ... MinIO's 3009, Phoenix 3013, Prometheus 3014), and
the host ports of two LGOS replicas."""
TRACING = {
    "OTEL_EXPORTER_OTLP_ENDPOINT": "http://phoenix:3013",
    "OTEL_RESOURCE_ATTRIBUTES": "openinference.project.name=lgos",
    "LITELLM_OTEL_V2": "true",
}
"""Every service (and LiteLLM's own OpenTelemetry) exports to the Phoenix container's ``lgos``
project, as docs/how-to/compose.md tells an operator to."""
PHOENIX = "http://127.0.0.1:3013"
PROMETHEUS = "http://127.0.0.1:3014"
RECORD = ROOT / ".dev" / "compose-stack"
GATEWAY = "http://127.0.0.1:3000/v1"
LGOS = "http://127.0.0.1:3004/v1"
ONE_SHOT = {
    "knowledge-setup",
    "gateway-jobs-image",
    "mcp-db-setup",
    "litellm-sync",
    "open-webui-setup",
    "minio-bucket",
}


@dataclass
class Stack:
    compose: Compose
    env: dict[str, str]
    engine: Engine

    def gateway(self) -> OpenAI:
        return OpenAI(base_url=GATEWAY, api_key=self.env["OPENAI_GATEWAY_API_KEY"], timeout=120)


def timed(timings: dict[str, float], what: str, started: float) -> None:
    timings[what] = round(time.monotonic() - started, 1)
    RECORD.mkdir(parents=True, exist_ok=True)
    (RECORD / "timings.json").write_text(json.dumps(timings, indent=2))


def build_everything(local: Engine, timings: dict[str, float]) -> None:
    started = time.monotonic()
    images.build_all(local, log.info)
    timings["first-party images"] = round(time.monotonic() - started, 1)
    for service in bases.STANDINS:
        begun = time.monotonic()
        bases.standin(local, log.info, service)
        timings[f"stand-in {service}"] = round(time.monotonic() - begun, 1)
    begun = time.monotonic()
    images.build_all(local, log.info, tuple(images.ON_STANDIN))
    timed(timings, "open-webui image", begun)
    timed(timings, "all images", started)


def up(compose: Compose, attempts: int = 6) -> None:
    """``up --detach``, again while it stops at a dependency that is not healthy yet: on a loaded
    machine a Python healthcheck can outlast compose.yaml's 3 s timeout and retries for a while,
    and Compose v1 gives up at the first unhealthy dependency (what was started stays up)."""
    for attempt in range(attempts):
        try:
            compose.run("up", "--detach", "--no-build")
            return
        except AssertionError as error:
            if "is unhealthy" not in str(error) or attempt == attempts - 1:
                raise
            log.warning("up stopped at an unhealthy dependency; again in 20 s: %s", error)
            time.sleep(20)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    busy = busy_ports(PORTS)
    if busy:
        pytest.fail(f"ports {busy} are in use (a `make dev` stack?): the compose stack needs them")
    shutil.rmtree(RECORD, ignore_errors=True)
    timings: dict[str, float] = {}
    for local in local_engine():
        build_everything(local, timings)
        compose, env = Compose.prepare(local, tmp_path_factory.mktemp("compose"), PROFILES, TRACING)
        started = time.monotonic()
        try:
            up(compose)
            for service, container in compose.containers().items():
                if service not in ONE_SHOT:
                    compose.wait_healthy(container)
            timed(timings, "up until every service healthy", started)
            (RECORD / "memory.json").write_text(json.dumps(compose.memory(), indent=2))
            yield Stack(compose, env, local)
        finally:
            compose.logs(RECORD / "logs")
            begun = time.monotonic()
            compose.run("down", "--volumes", "--timeout", "20", check=False)
            timed(timings, "down -v", begun)


def test_every_service_is_healthy_or_done(stack: Stack) -> None:
    services = images.services()
    expected = {
        name
        for name, spec in services.items()
        if not spec.get("profiles") or set(PROFILES) & set(spec["profiles"])
    }
    containers = stack.compose.containers()
    assert set(containers) == expected
    for service, container in containers.items():
        state = stack.compose.inspect(container)["State"]
        if service in ONE_SHOT:
            assert (state["Status"], state["ExitCode"]) == ("exited", 0), service
        else:
            assert state["Health"]["Status"] == "healthy", service


def test_containers_run_as_compose_says(stack: Stack) -> None:
    """``docker inspect``: compose.yaml's user, read-only root, no capabilities, no privilege
    gain, for every container (the placeholders for MinIO included)."""
    services = images.services()
    for service, container in stack.compose.containers().items():
        spec, config = services[service], stack.compose.inspect(container)
        host = config["HostConfig"]
        assert config["Config"]["User"] == str(spec.get("user", "")), service
        assert host["ReadonlyRootfs"] is bool(spec.get("read_only")), service
        assert host["CapDrop"] == ["ALL"], service
        assert host["SecurityOpt"] == ["no-new-privileges:true"], service


def run_example(name: str, env: dict[str, str], timeout: float = 240) -> str:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "examples" / name)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_sdk_examples_through_the_gateway(stack: Stack) -> None:
    env = {"PATH": "/usr/bin:/bin", "OPENAI_GATEWAY_API_KEY": stack.env["OPENAI_GATEWAY_API_KEY"]}
    catalog = run_example("gateway_catalog.py", env)
    assert "lgos/advanced-graph" in catalog and "lgos/simple-graph" in catalog
    assert catalog.rstrip().endswith("[completed]")
    out = run_example("advanced_graph.py", env)
    sections = dict(part.split("\n", 1) for part in out.split("== ")[1:])
    assert "offline-model: deterministic stand-in" in sections["chat"]
    assert "FILE_INPUT_OK" in sections["file summary"]
    assert "https://docs.langchain.com/oss/python/langgraph/interrupts" in sections["web search"]
    assert '{"total": 47}' in sections["client function"]
    assert "it is indexed, so later research can find it" in sections["save, review, approve"]


def test_sdk_examples_on_lgos_published_port(stack: Stack) -> None:
    env = {"PATH": "/usr/bin:/bin", "OPENAI_BASE_URL": LGOS}
    env["OPENAI_API_KEY"] = stack.env["LGOS_API_KEY"]
    # compose runs offline-model as a person meets it: its readable answers, not the echo.
    assert 'You asked: "Say hello."' in run_example("quickstart.py", env)
    assert "Decision: approved." in run_example("approval.py", env)
    assert '{"total": 47}' in run_example("client_function.py", env)
    cited = run_example("web_search_citations.py", env).splitlines()
    assert cited[-1].startswith("['https://docs.langchain.com/oss/python/langgraph/interrupts'")
    report = run_example("background_report.py", env).splitlines()
    assert report[0].endswith(" queued") and "completed" in report  # on the worker container


def test_prometheus_scrapes_every_first_party_container(stack: Stack) -> None:
    def all_up() -> dict[str, float] | None:
        answer = httpx.get(f"{PROMETHEUS}/api/v1/query", params={"query": "up"}, timeout=10)
        assert answer.status_code == 200, answer.text
        result = answer.json()["data"]["result"]
        up = {r["metric"]["job"]: float(r["value"][1]) for r in result}
        return up if up == {"lgos": 1.0, "lgos-worker": 1.0, "files": 1.0} else None

    eventually(all_up, "lgos, lgos-worker and files up in Prometheus", timeout=90)
    query = 'sum(http_server_requests_total{job="lgos",route="/v1/responses"})'
    answer = httpx.get(f"{PROMETHEUS}/api/v1/query", params={"query": query}, timeout=10)
    [served] = answer.json()["data"]["result"]
    assert float(served["value"][1]) >= 1  # the SDK examples went through the lgos container


def test_phoenix_holds_one_trace_per_request_across_the_containers(stack: Stack) -> None:
    """After the SDK examples through the gateway: a web research run and a file summary, each
    one trace from the LiteLLM container through LGOS to the model, the tool and the Files
    service."""
    gateway = {"route lgos/advanced-graph", "chat lgos/advanced-graph"}  # LiteLLM's spans
    lgos = {"POST /v1/responses", "invoke_workflow advanced-graph", "chat offline-model"}

    def traces() -> list[set[str]] | None:
        answer = httpx.get(f"{PHOENIX}/v1/projects/lgos/spans", params={"limit": 1000}, timeout=10)
        if answer.status_code == 404:  # nothing exported yet
            return None
        assert answer.status_code == 200, answer.text
        spans = answer.json()["data"]
        runs = {s["context"]["trace_id"] for s in spans if s["name"] in lgos}
        found = [{s["name"] for s in spans if s["context"]["trace_id"] == t} for t in runs]
        whole = [names for names in found if gateway | lgos <= names]
        research = any("execute_tool web_search" in names for names in whole)
        # The file summary reads the upload back from the Files service within the same trace.
        files = any("GET /v1/files/{file_id}/content" in names for names in whole)
        return whole if research and files else None

    eventually(traces, "a research and a file-summary trace, gateway to Files, in Phoenix", 90)


def save_and_find(stack: Stack, note: str, topic: str, *, restart: bool) -> None:
    gateway = stack.gateway()
    model = "lgos/advanced-graph"
    paused = gateway.responses.create(model=model, input=f"Remember this exact note: {note}")
    draft = review_payload(paused)
    assert note.lower() in draft["content"].lower()
    if restart:
        lgos = stack.compose.containers()["lgos"]
        docker(stack.engine, "restart", "--time", "10", lgos)
        stack.compose.wait_healthy(lgos, timeout=180)
    done = gateway.responses.create(
        model=model, previous_response_id=paused.id, input=answer_review(paused, "approve")
    )
    assert "it is indexed" in done.output_text
    found = gateway.responses.create(model=model, input=f"Search my knowledge for {topic}.")
    assert draft["filename"] in found.output_text or note.split()[0] in found.output_text.lower()


def test_save_review_approve_then_found(stack: Stack) -> None:
    save_and_find(stack, "canaries go out before full rollouts.", "canaries", restart=False)


def test_review_answered_after_lgos_restarts(stack: Stack) -> None:
    save_and_find(stack, "rollbacks need a tested runbook.", "rollbacks", restart=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as found:
        yield found


def test_chainlit_login_and_chat(stack: Stack, browser: Browser) -> None:
    shots = screenshot_dir("compose-chainlit")
    with browser_user(browser, ChainlitUser, "http://127.0.0.1:3002", shots, "chat") as person:
        person.login(stack.env["CHAINLIT_USERNAME"], stack.env["CHAINLIT_PASSWORD"])
        person.open("simple-graph")
        person.ask("What does a checkpointer do?", 'You asked: "What does a checkpointer do?"')
        person.shot("answered")


def test_open_webui_login_and_chat(stack: Stack, browser: Browser) -> None:
    shots = screenshot_dir("compose-open-webui")
    with browser_user(browser, WebUIUser, "http://127.0.0.1:3003", shots, "chat") as person:
        person.login(stack.env["WEBUI_ADMIN_EMAIL"], stack.env["WEBUI_ADMIN_PASSWORD"])
        person.open("simple-graph")
        person.ask("What does a checkpointer do?", 'You asked: "What does a checkpointer do?"', 90)
        person.shot("answered")


def served_responses(stack: Stack, container: str) -> float:
    """``POST /v1/responses`` requests ``container`` (an LGOS replica) has answered, from its own
    ``/metrics`` on its published port."""
    port = stack.compose.host_port(container, 3004)
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("http_server_requests_total{")
        and 'route="/v1/responses"' in line
        and 'method="POST"' in line
    )


def test_a_review_survives_losing_the_lgos_replica_that_paused_it(stack: Stack) -> None:
    """``--scale lgos=2`` behind the gateway, which reaches the replicas by the service name: a
    review paused on one replica is answered after that replica is killed, and the next
    conversation is answered too (last: it changes the stack)."""
    stack.compose.set_env("LGOS_HOST_PORTS", f"{REPLICA_PORTS[0]}-{REPLICA_PORTS[1]}")
    stack.compose.run("up", "--detach", "--no-build", "--scale", "lgos=2")
    replicas = stack.compose.replicas("lgos")
    assert len(replicas) == 2, replicas
    for replica in replicas:
        stack.compose.wait_healthy(replica, timeout=240)
    gateway = stack.gateway()
    model = "lgos/advanced-graph"
    before = {replica: served_responses(stack, replica) for replica in replicas}
    paused = gateway.responses.create(
        model=model, input="Remember this exact note: replicas share one checkpoint store."
    )
    review_payload(paused)  # paused for review
    grown = [r for r in replicas if served_responses(stack, r) > before[r]]
    assert len(grown) == 1, (before, grown)
    [pausing] = grown
    docker(stack.engine, "kill", pausing)
    done = gateway.responses.create(
        model=model, previous_response_id=paused.id, input=answer_review(paused, "approve")
    )
    assert "it is indexed" in done.output_text
    [survivor] = [r for r in replicas if r != pausing]
    assert served_responses(stack, survivor) >= before[survivor] + 1
    again = gateway.responses.create(model="lgos/simple-graph", input="Still there?")
    assert 'You asked: "Still there?"' in again.output_text
