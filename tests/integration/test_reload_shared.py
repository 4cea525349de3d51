"""``--reload`` with shared state: a review paused before a reload is answered after it (its
checkpoint is in PostgreSQL), and ``lgos worker --reload`` restarts on a change too."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import httpx
import pytest

from tests.support.clients import sdk_client
from tests.support.interrupts import resume_of
from tests.support.own_graphs import TARGET, lgos_from, reviewing, until_described
from tests.support.shared_state import REDIS_URL


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "my-project"
    folder.mkdir()
    (folder / "my_graphs.py").write_text(reviewing("first"))
    return folder


@pytest.fixture
def env(postgres_uri: str, tmp_path: Path) -> dict[str, str]:
    return {
        "LGOS_POSTGRES_URI": postgres_uri,
        "LGOS_REDIS_URL": REDIS_URL,
        "LGOS_STATE_DIR": str(tmp_path / "state"),
        "LGOS_BACKGROUND_QUEUE": f"lgos-test-reload:{uuid.uuid4().hex[:8]}",
    }


async def test_a_review_paused_before_a_reload_is_answered_after_it(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    log = tmp_path / "lgos.log"
    with lgos_from(project, "serve", TARGET, "--reload", log=log, env=env) as server:
        async with sdk_client(f"{server.url}/v1") as client:
            paused = await client.responses.create(model="my-review", input="Ship it")
            assert paused.output[0].type == "function_call"
            assert paused.output[0].name == "lgos_interrupt"

            (project / "my_graphs.py").write_text(reviewing("second"))
            await until_described(client, "my-review", "second")

            done = await client.responses.create(**resume_of(paused, "approve"))
            assert done.status == "completed"
            assert done.output_text == "Decision: approve (second)"  # resumed by the new code
            assert server.process.poll() is None
    assert log.read_text().count("reloading: changed") == 1


def test_the_worker_restarts_on_a_change(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    log = tmp_path / "worker.log"
    env = {**env, "LGOS_RELOAD": "true"}
    with lgos_from(project, "worker", TARGET, log=log, env=env) as server:
        (project / "helpers.py").write_text("VALUE = 1\n")
        deadline = time.monotonic() + 60
        while log.read_text().count('"worker started"') < 2:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        assert httpx.get(f"{server.url}/health").status_code == 200
        assert server.process.poll() is None
    text = log.read_text()
    assert text.count("reloading: changed") == 1
    assert str(project / "helpers.py") in text
    assert text.count('"worker stopped"') == 2  # the reload stopped it as a shutdown does
