"""The native stack as a newcomer runs it: devstack up --detach, the SDK examples, down."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.devstack import (
    DEVSTACK,
    PORT_VARIABLES,
    detached_stack,
    pg_data_dir,
    stack_env,
)
from tests.support.servers import OFFLINE_MODEL_ECHO, ROOT


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    with (
        pg_data_dir() as pg_data,
        # Echo: the examples' checks see what reached the model.
        detached_stack(tmp_path_factory.mktemp("devstack"), pg_data, OFFLINE_MODEL_ECHO) as (
            env,
            out,
        ),
    ):
        assert "offline-model, the deterministic stand-in" in out
        yield env
    # Nothing keeps serving after dev-down.
    with pytest.raises(httpx.TransportError):
        httpx.get(f"http://127.0.0.1:{env['LGOS_PORT']}/health", timeout=1.0)


LGOS_KEY = "sk-lgos-local-only"


def test_lgos_checks_keys_and_the_gateway_holds_one(stack: dict[str, str]) -> None:
    lgos = f"http://127.0.0.1:{stack['LGOS_PORT']}/v1"
    assert httpx.get(f"{lgos}/models", timeout=5).status_code == 401
    wrong = httpx.get(f"{lgos}/models", headers={"Authorization": "Bearer sk-x"}, timeout=5)
    assert wrong.status_code == 401
    assert wrong.json()["error"]["code"] == "invalid_api_key"
    keyed = httpx.get(f"{lgos}/models", headers={"Authorization": f"Bearer {LGOS_KEY}"})
    assert keyed.status_code == 200
    # Clients of the gateway hold only the gateway key; the gateway sends LGOS's.
    gateway = f"http://127.0.0.1:{stack['OPENAI_GATEWAY_PORT']}/v1"
    answer = httpx.post(
        f"{gateway}/responses",
        headers={"Authorization": "Bearer sk-lgos-local-dev"},
        json={"model": "lgos/simple-graph", "input": "Who holds the key?"},
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    assert "Who holds the key?" in answer.json()["output"][0]["content"][0]["text"]
    served = (Path(stack["DEVSTACK_STATE_DIR"]) / "litellm.yaml").read_text()
    assert LGOS_KEY not in served  # the served config names the variable, not the key


def run_example(
    name: str, env: dict[str, str], *, gateway: bool = False, timeout: float = 60
) -> str:
    """An SDK example against the stack's LGOS, or its gateway with the gateway's local key."""
    if gateway:
        # No OPENAI_BASE_URL: the gateway examples find the gateway by the stack's own
        # OPENAI_GATEWAY_PORT (the one gateway-port variable everywhere).
        client = {"OPENAI_GATEWAY_API_KEY": "sk-lgos-local-dev"}
        env = {k: v for k, v in env.items() if k != "OPENAI_BASE_URL"}
    else:
        client = {
            "OPENAI_BASE_URL": f"http://127.0.0.1:{env['LGOS_PORT']}/v1",
            "OPENAI_API_KEY": LGOS_KEY,  # the native stack's LGOS checks keys
        }
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "examples" / name)],
        env={**env, **client},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_status_reports_every_component(stack: dict[str, str]) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "devstack.py"), "status"],
        env=stack,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0
    assert "lgos" in result.stdout and "offline-model" in result.stdout
    assert "searxng" in result.stdout
    assert "lgos-worker" in result.stdout
    assert "files" in result.stdout and "embeddings" in result.stdout
    assert "gateway" in result.stdout and "mcp-db" in result.stdout
    assert "chainlit" in result.stdout


def test_files_service_with_semantic_search(stack: dict[str, str]) -> None:
    """The stack's Files service: local disk, embedded PostgreSQL + pgvector, MiniLM ranking."""
    from openai import OpenAI

    client = OpenAI(
        base_url=f"http://127.0.0.1:{stack['FILES_PORT']}/v1",
        api_key="sk-files-local-only",
        max_retries=0,
    )
    store = client.vector_stores.create(name="devstack")
    notes = {
        "bread.md": "A sourdough starter is flour and water fermented by wild yeast.",
        "sea.md": "Tides come from the gravitational pull of the moon and the sun.",
    }
    for name, text in notes.items():
        uploaded = client.files.create(file=(name, text.encode()), purpose="assistants")
        attached = client.vector_stores.files.create_and_poll(
            file_id=uploaded.id, vector_store_id=store.id, poll_interval_ms=100
        )
        assert attached.status == "completed", attached.last_error
    # No shared words with the note: only the embedding model can rank it first.
    hits = client.vector_stores.search(store.id, query="why the ocean rises and falls").data
    assert hits[0].filename == "sea.md"
    files_dir = Path(stack["DEVSTACK_STATE_DIR"]) / "files"
    assert len([p for p in files_dir.rglob("file-*") if p.is_file()]) == 2


def test_files_upload_through_the_stack_gateway(stack: dict[str, str]) -> None:
    """Clients hold the gateway key only; the gateway stores the file in the Files service."""
    from openai import OpenAI

    gateway = OpenAI(
        base_url=f"http://127.0.0.1:{stack['OPENAI_GATEWAY_PORT']}/v1",
        api_key="sk-lgos-local-dev",
        max_retries=0,
    )
    uploaded = gateway.files.create(file=("brief.md", b"Ship on Friday."), purpose="assistants")
    assert uploaded.id in [f.id for f in gateway.files.list()]
    direct = OpenAI(
        base_url=f"http://127.0.0.1:{stack['FILES_PORT']}/v1",
        api_key="sk-files-local-only",
        max_retries=0,
    )
    assert direct.files.content(uploaded.id).read() == b"Ship on Friday."
    assert gateway.files.delete(uploaded.id).deleted


def test_gateway_example_through_the_stack_gateway(stack: dict[str, str]) -> None:
    """The gateway on its port, synced from the stack's LGOS, keyed by the local default key."""
    out = run_example("gateway_catalog.py", stack, gateway=True)
    assert "lgos/interruptible-approval" in out and "[features: background, interrupts]" in out
    assert "lgos/simple-graph" in out and "Streams responses" in out
    assert "[features: client_events, file_inputs, interrupts, mcp_tools]" in out
    assert out.rstrip().endswith("[completed]")


def test_advanced_graph_examples_through_the_stack_gateway(stack: dict[str, str]) -> None:
    """Every SDK example of the advanced-graph page, via the gateway, on the stack's knowledge."""
    out = run_example("advanced_graph.py", stack, gateway=True, timeout=180)
    sections = dict(part.split("\n", 1) for part in out.split("== ")[1:])
    assert "Explain why idempotency matters" in sections["chat"]
    assert "offline-model: deterministic stand-in" in sections["chat"]
    assert "FILE_INPUT_OK" in sections["file summary"]
    assert "https://docs.langchain.com/oss/python/langgraph/interrupts" in sections["web search"]
    assert "['https://docs.langchain.com/oss/python/langgraph/interrupts'" in sections["web search"]
    assert '{"total": 47}' in sections["client function"]
    review = sections["save, review, approve"]
    assert (
        "'choices': ['approve', 'reject']" in review
        and "retries need idempotency keys." in review.lower()
    )
    assert "it is indexed, so later research can find it" in review
    # The note went to the stack's knowledge store, created by the one-shot job.
    store_id = (Path(stack["DEVSTACK_STATE_DIR"]) / "knowledge-vector-store-id").read_text().strip()
    files = httpx.get(
        f"http://127.0.0.1:{stack['FILES_PORT']}/v1/vector_stores/{store_id}/files",
        headers={"Authorization": "Bearer sk-files-local-only"},
        timeout=10,
    ).json()["data"]
    assert [f["status"] for f in files] == ["completed"]


def test_quickstart_example(stack: dict[str, str]) -> None:
    out = run_example("quickstart.py", stack)
    assert "simple-graph" in out and "Streams responses" in out
    assert 'You said: "What does a checkpointer do?"' in out
    assert "expert audience" in out
    assert "[completed] usage:" in out
    assert 'You said: "Say hello."' in out


def test_status_commentary_example(stack: dict[str, str]) -> None:
    out = run_example("status_commentary.py", stack).splitlines()
    assert out[:2] == ["status: Reading the question", "status: Drafting the answer"]
    assert out[2].startswith("answer: [offline-model")


def test_client_function_example(stack: dict[str, str]) -> None:
    out = run_example("client_function.py", stack)
    assert "graph called calculate_sum({'numbers': [12, 30, 5]})" in out
    assert 'Tool outputs: "{"total": 47}"' in out


def test_web_search_citation_example(stack: dict[str, str]) -> None:
    out = run_example("web_search_citations.py", stack).splitlines()
    assert out[-1].startswith("['https://docs.langchain.com/oss/python/langgraph/interrupts'")


def test_approval_example_runs_on_postgres_and_redis(stack: dict[str, str]) -> None:
    out = run_example("approval.py", stack)
    assert "lgos_interrupt asks: Approve this change?" in out
    assert "Decision: approved." in out
    # The stack's LGOS keeps interrupt runs in the embedded PostgreSQL and leases in Redis.
    pg = f"postgresql://postgres@127.0.0.1:{stack['POSTGRES_PORT']}/postgres"
    import psycopg

    with psycopg.connect(pg) as conn:
        tables = {r[0] for r in conn.execute("select tablename from pg_tables")}
        extensions = conn.execute(
            "select name from pg_available_extensions where name = 'vector'"
        ).fetchall()
    assert "checkpoints" in tables
    assert extensions, "the embedded PostgreSQL ships pgvector"


def test_background_report_example(stack: dict[str, str]) -> None:
    out = run_example("background_report.py", stack)
    lines = out.splitlines()
    assert lines[0].endswith(" queued")
    assert "completed" in lines
    assert "status: Collecting sources" in lines
    assert 'You said: "Report on idempotency keys in job queues."' in out
    # It ran on the stack's worker process, recorded in the embedded PostgreSQL.
    import psycopg

    pg = f"postgresql://postgres@127.0.0.1:{stack['POSTGRES_PORT']}/postgres"
    with psycopg.connect(pg) as conn:
        rows = conn.execute(
            "select status, worker from lgos_background_responses where id = %s",
            (lines[0].split()[0],),
        ).fetchall()
    assert len(rows) == 1
    assert rows[0][0] == "completed"
    assert rows[0][1] is not None


def test_logs_are_written(stack: dict[str, str]) -> None:
    logs = Path(stack["DEVSTACK_STATE_DIR"])
    assert (logs / "lgos.log").exists()
    assert (logs / "offline-model.log").exists()
    assert (logs / "searxng.log").exists()
    assert (logs / "postgres.log").exists()
    assert "worker started" in (logs / "lgos-worker.log").read_text()
    assert (logs / "gateway.log").exists() and (logs / "gateway-sync.log").exists()


def test_foreground_stack_stops_everything_on_ctrl_c(tmp_path: Path) -> None:
    with pg_data_dir() as pg_data:
        env = stack_env(tmp_path, pg_data)
        ports = {name: env[name] for name in PORT_VARIABLES}
        run_in_foreground_and_interrupt(env, ports)


def run_in_foreground_and_interrupt(env: dict[str, str], ports: dict[str, str]) -> None:
    import signal

    process = subprocess.Popen(
        [*DEVSTACK, "up"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    seen: list[str] = []
    try:
        for line in process.stdout:  # up prints this line once every component is healthy
            seen.append(line)
            if "Ctrl-C stops the stack." in line:
                break
        process.send_signal(signal.SIGINT)
        # Up to 10 s a component before SIGKILL, last started first: slow on a busy machine.
        rest, _ = process.communicate(timeout=150)
    finally:
        if process.poll() is None:
            process.kill()
    out = "".join(seen) + rest
    assert process.returncode == 0, out
    assert "Ctrl-C stops the stack." in out
    for name in (
        "chainlit",
        "gateway",
        "mcp-db",
        "lgos",
        "lgos-2",
        "lgos-worker",
        "offline-model",
        "files",
        "embeddings",
        "searxng",
        "redis",
        "postgres",
    ):
        assert f"stopped {name}" in out
    for port in ports.values():
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", int(port)), timeout=1.0).close()
