"""The first-party images, built here from the local Python base and run as containers.

A real Docker engine of this checkout's own (installed and started when missing; stopped after if
the test run started it) builds LGOS, offline-model, the Files service, the gateway jobs and
SearXNG from the repository's Dockerfiles with ``PYTHON_IMAGE`` set to the local Debian + Python
3.11 base. Each container runs hardened as compose.yaml says (user, read-only root, no
capabilities, no privilege gain, tmpfs, memory limit), answers its image's HEALTHCHECK, and serves
the official ``openai`` SDK on its published port (SearXNG through LGOS's web search);
``docker inspect`` and the running processes confirm the hardening.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import openai
import pytest
import yaml
from lgos_gateways.catalog import GATEWAY_PREFIX
from lgos_stack.containers.bases import PYTHON_IMAGE, standin
from lgos_stack.containers.engine import Engine, docker
from lgos_stack.containers.images import Image, services
from openai import AsyncOpenAI

from tests.support.clients import sdk_client
from tests.support.containers import Containers, local_engine
from tests.support.servers import SEARXNG_DIR

LGOS_KEY = f"sk-lgos-{uuid.uuid4().hex}"
FILES_KEY = f"sk-files-{uuid.uuid4().hex}"
POSTGRES_PASSWORD = uuid.uuid4().hex
log = logging.getLogger(__name__)
BUILT = ("lgos", "offline-model", "files", "gateway-jobs-image", "searxng")


@pytest.fixture(scope="module")
def local() -> Iterator[Engine]:
    yield from local_engine()


@pytest.fixture(scope="module")
def images(local: Engine) -> dict[str, Image]:
    built = {}
    for service in BUILT:
        image = Image.of(service)
        image.build(local)
        built[service] = image
    return built


@pytest.fixture(scope="module")
def containers(local: Engine) -> Iterator[Containers]:
    found = Containers(local)
    try:
        yield found
    finally:
        found.remove_all()


def on_network(
    containers: Containers, image: Image, service: str, port: int, env: dict[str, str] | None = None
) -> str:
    """``service`` on the session's network under its compose name, healthy, port published."""
    name = containers.run(
        service, image.tag, publish=port, network=containers.network(), alias=service, env=env
    )
    containers.wait_healthy(name)
    return name


@pytest.fixture(scope="module")
def offline_model(containers: Containers, images: dict[str, Image]) -> str:
    return on_network(containers, images["offline-model"], "offline-model", 3007)


@pytest.fixture(scope="module")
def searxng(containers: Containers, images: dict[str, Image]) -> str:
    env = {"SEARXNG_SECRET": uuid.uuid4().hex}
    return on_network(containers, images["searxng"], "searxng", 8080, env)


@pytest.fixture(scope="module")
def lgos(containers: Containers, images: dict[str, Image], offline_model: str, searxng: str) -> str:
    env = {
        "LGOS_API_KEYS": f"{LGOS_KEY}=gateway",
        "LGOS_STATE_DIR": "/tmp/lgos",
        "DEMO_API_OFFLINE_MODEL_URL": "http://offline-model:3007/v1",
        "DEMO_API_WEB_SEARCH_URL": "http://searxng:8080",
    }
    return on_network(containers, images["lgos"], "lgos", 3004, env)


@pytest.fixture(scope="module")
def postgres(containers: Containers, local: Engine) -> str:
    """The local stand-in for pgvector/pgvector:pg18, with compose's settings and healthcheck
    and a new named volume for its data."""
    image = standin(local, log.info, "postgres")
    env = {"POSTGRES_USER": "lgos", "POSTGRES_PASSWORD": POSTGRES_PASSWORD, "POSTGRES_DB": "lgos"}
    volume = containers.volume("postgres-data")
    name = containers.run(
        "postgres",
        image,
        env=env,
        network=containers.network(),
        alias="postgres",
        mounts=[f"{volume}:/var/lib/postgresql"],
        publish=5432,
    )
    containers.wait_healthy(name)
    return name


@pytest.fixture(scope="module")
def files(containers: Containers, images: dict[str, Image], postgres: str) -> str:
    env = {
        "FILES_POSTGRES_URI": f"postgresql://lgos:{POSTGRES_PASSWORD}@postgres:5432/lgos",
        "FILES_API_KEYS": FILES_KEY,
    }
    return on_network(containers, images["files"], "files", 3006, env)


def base_url(containers: Containers, name: str, port: int) -> str:
    return f"http://127.0.0.1:{containers.host_port(name, port)}/v1"


@pytest.fixture
async def lgos_sdk(containers: Containers, lgos: str) -> AsyncIterator[AsyncOpenAI]:
    async with sdk_client(base_url(containers, lgos, 3004), api_key=LGOS_KEY) as sdk:
        yield sdk


def test_images_run_the_local_python_3_11(local: Engine, images: dict[str, Image]) -> None:
    for image in images.values():
        probe = ["run", "--rm", "--network", "none", image.tag, "python", "-c"]
        version = docker(local, *probe, "import sys; print(sys.version_info[:2])").stdout
        assert version.strip() == "(3, 11)", image.tag
    # Built FROM the local base: its layers are the image's first layers.
    base = docker(local, "image", "inspect", "--format", "{{json .RootFS.Layers}}", PYTHON_IMAGE)
    for image in images.values():
        layers = docker(local, "image", "inspect", "--format", "{{json .RootFS.Layers}}", image.tag)
        assert layers.stdout.startswith(base.stdout.strip()[:-1]), image.tag


async def test_offline_model_container_answers_the_sdk(
    containers: Containers, offline_model: str
) -> None:
    async with sdk_client(base_url(containers, offline_model, 3007)) as sdk:
        completion = await sdk.chat.completions.create(
            model="offline-model", messages=[{"role": "user", "content": "Say hello"}]
        )
    assert completion.choices[0].message.content


async def test_lgos_container_runs_a_graph_over_the_container_network(
    lgos_sdk: AsyncOpenAI,
) -> None:
    models = {model.id async for model in lgos_sdk.models.list()}
    assert {"simple-graph", "advanced-graph"} <= models
    # simple-graph calls offline-model by its service name on the containers' network.
    response = await lgos_sdk.responses.create(model="simple-graph", input="What is LangGraph?")
    assert response.status == "completed"
    assert response.model == "simple-graph"
    assert response.output_text


async def test_lgos_container_cites_the_searxng_container(lgos_sdk: AsyncOpenAI) -> None:
    """server-tools' web search, streamed: LGOS → SearXNG (its seeded corpus) by service name;
    every cited URL is one of the corpus's documents."""
    corpus = {d["url"] for d in json.loads((SEARXNG_DIR / "corpus.json").read_text())}
    ask = "web search persistence checkpointers"
    tools: list[Any] = [{"type": "web_search"}]
    stream = await lgos_sdk.responses.create(
        model="server-tools", input=ask, tools=tools, stream=True
    )
    events = [event async for event in stream]
    cited = [e.annotation for e in events if e.type == "response.output_text.annotation.added"]
    assert events[-1].type == "response.completed"
    assert any(e.type == "response.web_search_call.completed" for e in events)
    assert cited and {annotation.url for annotation in cited} <= corpus


async def test_lgos_container_checks_its_key(containers: Containers, lgos: str) -> None:
    async with sdk_client(base_url(containers, lgos, 3004), api_key="sk-wrong") as sdk:
        with pytest.raises(openai.AuthenticationError) as raised:
            await sdk.responses.create(model="simple-graph", input="hi")
    assert raised.value.status_code == 401
    assert LGOS_KEY not in str(raised.value.body)


async def test_files_container_stores_and_returns_a_file(
    containers: Containers, files: str
) -> None:
    async with sdk_client(base_url(containers, files, 3006), api_key=FILES_KEY) as sdk:
        uploaded = await sdk.files.create(
            file=("notes.txt", b"containers ran here"), purpose="assistants"
        )
        content = await sdk.files.content(uploaded.id)
        store = await sdk.vector_stores.create(name="notes")
        attached = await sdk.vector_stores.files.create_and_poll(
            file_id=uploaded.id, vector_store_id=store.id, poll_interval_ms=200
        )
        assert attached.status == "completed"
        found = await sdk.vector_stores.search(store.id, query="containers")
    assert content.content == b"containers ran here"
    assert uploaded.bytes == len(b"containers ran here")
    assert [hit.file_id for hit in found.data] == [uploaded.id]


def test_gateway_jobs_write_the_litellm_catalog_into_a_new_volume(
    containers: Containers, images: dict[str, Image], lgos: str
) -> None:
    """The jobs image's user owns /config, so a new named volume there is writable by it."""
    volume = containers.volume("litellm-config")
    sync = [
        "lgos-litellm-sync",
        "--lgos-url",
        "http://lgos:3004",
        "--config",
        "/config/litellm.yaml",
        "--base",
        "/app/gateways/litellm/config.yaml",
        "--upstream-key",
        "os.environ/LGOS_API_KEY",
    ]
    tag = images["gateway-jobs-image"].tag
    containers.run(
        "litellm-sync",
        tag,
        env={"LGOS_API_KEY": LGOS_KEY},
        network=containers.network(),
        mounts=[f"{volume}:/config"],
        command=sync,
        detach=False,
    )
    read = ["python", "-c", "print(open('/config/litellm.yaml').read())"]
    written = containers.run(
        "litellm-sync", tag, mounts=[f"{volume}:/config:ro"], command=read, detach=False
    )
    config = yaml.safe_load(written)
    names = {entry["model_name"] for entry in config["model_list"]}
    assert {f"{GATEWAY_PREFIX}simple-graph", f"{GATEWAY_PREFIX}advanced-graph"} <= names
    assert LGOS_KEY not in written  # the config names the variable, not the key


def test_containers_run_hardened_as_compose_says(
    containers: Containers,
    offline_model: str,
    lgos: str,
    files: str,
    searxng: str,
    postgres: str,
) -> None:
    compose = services()
    running = {"offline-model": offline_model, "lgos": lgos, "files": files, "searxng": searxng}
    running["postgres"] = postgres
    for service, name in running.items():
        spec, inspected = compose[service], containers.inspect(name)
        host = inspected["HostConfig"]
        uid = "999" if service == "postgres" else "10001"
        assert inspected["Config"]["User"] == spec["user"] == f"{uid}:{uid}", service
        assert host["ReadonlyRootfs"] is True, service
        assert host["CapDrop"] == ["ALL"], service
        assert "no-new-privileges:true" in host["SecurityOpt"], service
        assert host["Memory"] > 0, service
        status, seen = containers.exec(name, "id", "-u")
        assert (status, seen.strip()) == (0, uid), service
        status, _ = containers.exec(name, "sh", "-c", "echo x > /probe")
        assert status != 0, f"{service}: the root filesystem took a write"
        status, effective = containers.exec(name, "grep", "CapEff", "/proc/1/status")
        assert status == 0 and effective.split()[-1] == "0000000000000000", service
