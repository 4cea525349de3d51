"""``lgos serve --reload`` and ``lgos worker --reload`` for authors: the real console script, run
from the folder of the author's project, restarts its server when a ``*.py`` file there changes;
the process the author started (the supervisor) keeps running and serving all along."""

from __future__ import annotations

import asyncio
import time
from contextlib import AbstractContextManager
from pathlib import Path

import httpx
import pytest

from tests.support.clients import sdk_client
from tests.support.own_graphs import (
    TARGET,
    answering,
    lgos_from,
    served_description,
    until_described,
)
from tests.support.servers import Server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "my-project"
    folder.mkdir()
    (folder / "my_graphs.py").write_text(answering("Hello.", description="first"))
    return folder


def lgos_reloading(project: Path, tmp_path: Path, *args: str) -> AbstractContextManager[Server]:
    env = {"LGOS_STATE_DIR": str(tmp_path / "state")}
    return lgos_from(project, "serve", TARGET, *args, log=tmp_path / "lgos.log", env=env)


async def test_an_edit_to_the_graph_is_served_without_a_manual_restart(
    project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "lgos.log"
    with lgos_reloading(project, tmp_path, "--reload") as server:
        async with sdk_client(f"{server.url}/v1") as client:
            assert await served_description(client, "my-graph") == "first"
            (project / "my_graphs.py").write_text(answering("Hello.", description="second"))
            await until_described(client, "my-graph", "second")
            assert server.process.poll() is None  # the supervisor the author started still runs
            answer = await client.responses.create(model="my-graph", input="hi")
            assert answer.output_text == "Hello."
    reloads = [
        line
        for line in log.read_text().splitlines()
        if "change detected" in line or "changed" in line
    ]
    assert len(reloads) == 1, log.read_text()  # one line a reload
    assert f"reloading: changed {project / 'my_graphs.py'}" in reloads[0]


async def test_a_reload_lets_the_request_in_flight_finish(project: Path, tmp_path: Path) -> None:
    (project / "my_graphs.py").write_text(answering("Hello.", description="slow", delay=3.0))
    log = tmp_path / "lgos.log"
    with lgos_reloading(project, tmp_path, "--reload") as server:
        async with sdk_client(f"{server.url}/v1") as client:
            stream = await client.responses.create(model="my-graph", input="hi", stream=True)
            async with stream as events:
                types = []
                async for event in events:
                    types.append(event.type)
                    if event.type == "response.created":  # the graph now waits 3 s
                        (project / "my_graphs.py").write_text(
                            answering("Hello.", description="second")
                        )
                    if event.type == "response.completed":
                        assert event.response.output_text == "Hello."
            assert types[-1] == "response.completed", types
            await until_described(
                client, "my-graph", "second"
            )  # reloaded once the request was answered
    text = log.read_text()
    assert text.count("reloading: changed") == 1
    # uvicorn's own line for a shutdown that waits for an open response
    assert text.index("Waiting for connections to close") > text.index("reloading: changed")


def test_a_change_outside_python_files_does_not_reload(project: Path, tmp_path: Path) -> None:
    log = tmp_path / "lgos.log"
    env = {"LGOS_STATE_DIR": str(tmp_path / "state"), "LGOS_RELOAD": "1"}
    with lgos_from(project, "serve", TARGET, log=log, env=env) as server:
        (project / "notes.txt").write_text("not code")
        time.sleep(3)  # longer than the watcher's debounce
        assert httpx.get(f"{server.url}/health").status_code == 200
    assert "reloading" not in log.read_text()
    assert server.process.returncode == 0  # stopped cleanly, as a server without --reload is


async def test_a_broken_edit_waits_for_the_fix(project: Path, tmp_path: Path) -> None:
    with lgos_reloading(project, tmp_path, "--reload") as server:
        async with sdk_client(f"{server.url}/v1") as client:
            (project / "my_graphs.py").write_text("def create_registry(:\n")
            deadline = time.monotonic() + 60
            while "waiting for a change" not in server.log.read_text():
                assert time.monotonic() < deadline, server.log.read_text()
                await asyncio.sleep(0.2)
            assert server.process.poll() is None  # the supervisor waits; only its child exited
            assert "SyntaxError" in server.log.read_text()  # the author sees why
            (project / "my_graphs.py").write_text(answering("Hello.", description="fixed"))
            await until_described(client, "my-graph", "fixed")
