"""A user's own graph, served as docs/how-to/plug-in-a-graph.md says: the real ``lgos`` console
script run from the folder that holds ``my_graphs.py`` (or pointed at it with ``--app-dir``),
beside the demo graphs, and every way a target can fail reported in one line with exit status 2."""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from openai import AsyncOpenAI

from tests.support.clients import sdk_client
from tests.support.own_graphs import LGOS, TARGET, answering
from tests.support.servers import free_port, serve

DEMO = "lgos_demo_graphs.registry:create_registry"
ANSWER = "Hello from my own graph."

MY_GRAPHS = answering(ANSWER)
PROJECT_TABLE = '[tool.lgos]\nregistry = "my_graphs:create_registry"\napp-dir = "src"\n'

BROKEN = {
    "needs_a_dependency.py": "import a_dependency_that_is_not_installed\n",
    "raises_inside.py": "def create_registry():\n    raise RuntimeError('no config file')\n",
    "not_a_registry.py": "def create_registry():\n    return {'my-graph': None}\n",
    "same_name.py": MY_GRAPHS,
}


@pytest.fixture
def app_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "my-project"
    folder.mkdir()
    (folder / "my_graphs.py").write_text(MY_GRAPHS)
    for name, source in BROKEN.items():
        (folder / name).write_text(source)
    return folder


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    return folder


@asynccontextmanager
async def lgos(
    *targets: str, cwd: Path, log: Path, env: dict[str, str] | None = None
) -> AsyncIterator[AsyncOpenAI]:
    """The ``lgos`` console script serving ``targets`` from ``cwd``, and the SDK against it."""
    port = free_port()
    command = [str(LGOS), "serve", *targets, "--port", str(port)]
    state = {"LGOS_STATE_DIR": str(log.parent / "state"), **(env or {})}
    with serve(["lgos"], command=command, port=port, env=state, log=log, cwd=cwd) as server:
        async with sdk_client(f"{server.url}/v1") as client:
            yield client


async def streamed_answer(client: AsyncOpenAI) -> str:
    deltas = []
    async with await client.responses.create(model="my-graph", input="hi", stream=True) as events:
        async for event in events:
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
            if event.type == "response.completed":
                assert event.response.output_text == ANSWER
    assert len(deltas) > 1  # streamed piece by piece, not in one block
    return "".join(deltas)


async def test_the_readme_command_serves_the_graph_from_the_current_directory(
    app_dir: Path, tmp_path: Path
) -> None:
    async with lgos(TARGET, cwd=app_dir, log=tmp_path / "lgos.log") as client:
        assert [model.id async for model in client.models.list()] == ["my-graph"]
        assert await streamed_answer(client) == ANSWER
        chat = await client.chat.completions.create(
            model="my-graph", messages=[{"role": "user", "content": "hi"}]
        )
        assert chat.choices[0].message.content == ANSWER


async def test_app_dir_names_the_folder_from_another_directory(
    app_dir: Path, elsewhere: Path, tmp_path: Path
) -> None:
    args = (TARGET, "--app-dir", str(app_dir))
    async with lgos(*args, cwd=elsewhere, log=tmp_path / "lgos.log") as client:
        assert await streamed_answer(client) == ANSWER


async def test_the_setting_serves_the_demo_graphs_beside_the_users(
    app_dir: Path, elsewhere: Path, tmp_path: Path
) -> None:
    env = {"LGOS_REGISTRY": f"{DEMO}, {TARGET}", "LGOS_APP_DIR": str(app_dir)}
    async with lgos(cwd=elsewhere, log=tmp_path / "lgos.log", env=env) as client:
        served = [model.id async for model in client.models.list()]
        assert {"simple-graph", "advanced-graph", "my-graph"} <= set(served)
        assert served[-1] == "my-graph"  # merged in the order the setting lists them
        assert await streamed_answer(client) == ANSWER


def write_project(folder: Path, table: str = PROJECT_TABLE) -> Path:
    """A project folder as ``lgos new`` lays one out: pyproject.toml, the code under src/."""
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "my_graphs.py").write_text(MY_GRAPHS)
    (folder / "pyproject.toml").write_text(f'[project]\nname = "my-project"\n\n{table}')
    return folder


async def test_a_project_serves_what_its_pyproject_names(elsewhere: Path, tmp_path: Path) -> None:
    project = write_project(tmp_path / "my-project")
    async with lgos("--project", str(project), cwd=elsewhere, log=tmp_path / "lgos.log") as client:
        assert [model.id async for model in client.models.list()] == ["my-graph"]
        assert await streamed_answer(client) == ANSWER


async def test_the_project_setting_serves_it_after_the_registry_setting(
    elsewhere: Path, tmp_path: Path
) -> None:
    project = write_project(tmp_path / "my-project")
    env = {"LGOS_REGISTRY": DEMO, "LGOS_PROJECT": str(project)}
    async with lgos(cwd=elsewhere, log=tmp_path / "lgos.log", env=env) as client:
        served = [model.id async for model in client.models.list()]
        assert {"simple-graph", "advanced-graph"} <= set(served) and served[-1] == "my-graph"
    # Named twice, by the registry setting and by the project: served once.
    env["LGOS_REGISTRY"] = f"{DEMO},{TARGET}"
    env["LGOS_APP_DIR"] = str(project / "src")
    async with lgos(cwd=elsewhere, log=tmp_path / "again.log", env=env) as client:
        assert [m.id async for m in client.models.list()].count("my-graph") == 1


def test_a_project_that_names_nothing_servable_is_one_line(tmp_path: Path) -> None:
    absent = tmp_path / "absent"
    assert refused("serve", "--project", str(absent), cwd=tmp_path) == (
        f"lgos: project {absent} has no pyproject.toml"
    )
    bare = write_project(tmp_path / "bare", table="")
    assert refused("serve", cwd=tmp_path, env={"LGOS_PROJECT": str(bare)}) == (
        f'lgos: {bare / "pyproject.toml"} has no [tool.lgos] registry = "MODULE:ATTR"'
    )
    typo = write_project(tmp_path / "typo", table=PROJECT_TABLE.replace("my_graphs", "my_graph"))
    assert refused("serve", "--project", str(typo), cwd=tmp_path) == (
        f"lgos: cannot import module 'my_graph' (from {tmp_path.resolve()}): "
        "No module named 'my_graph'"
    )


def run_lgos(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``lgos ARGS`` in ``cwd``, with no LGOS setting but ``env`` from the environment."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("LGOS_")}
    return subprocess.run(
        [str(LGOS), *args],
        cwd=cwd,
        env={**environment, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )


def refused(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    """``lgos ARGS`` must exit 2 with one line on stderr, which is returned."""
    ran = run_lgos(*args, cwd=cwd, env=env)
    assert ran.returncode == 2, ran.stderr
    assert "Traceback" not in ran.stderr
    lines = ran.stderr.splitlines()
    assert len(lines) == 1, ran.stderr
    return lines[0]


def test_a_missing_module_names_the_module_and_the_folder(app_dir: Path, elsewhere: Path) -> None:
    assert refused("serve", TARGET, cwd=elsewhere) == (
        f"lgos: cannot import module 'my_graphs' (from {elsewhere.resolve()}): "
        "No module named 'my_graphs'"
    )


def test_a_missing_dependency_of_the_module_is_told_apart(app_dir: Path) -> None:
    line = refused("serve", "needs_a_dependency:create_registry", cwd=app_dir)
    assert line == (
        f"lgos: importing 'needs_a_dependency' failed at {app_dir / 'needs_a_dependency.py'}:1: "
        "ModuleNotFoundError: No module named 'a_dependency_that_is_not_installed'"
    )


def test_a_missing_attribute_a_failing_factory_and_a_wrong_object(app_dir: Path) -> None:
    assert refused("serve", "my_graphs:make_registry", cwd=app_dir) == (
        f"lgos: module 'my_graphs' ({app_dir / 'my_graphs.py'}) has no attribute 'make_registry'"
    )
    assert refused("serve", "raises_inside:create_registry", cwd=app_dir) == (
        f"lgos: raises_inside:create_registry failed at {app_dir / 'raises_inside.py'}:2: "
        "RuntimeError: no config file"
    )
    assert refused("serve", "not_a_registry:create_registry", cwd=app_dir) == (
        "lgos: not_a_registry:create_registry returned dict, not a GraphRegistry"
    )


def test_a_graph_name_in_two_registries_names_the_graph_and_both(app_dir: Path) -> None:
    assert refused("serve", TARGET, "same_name:create_registry", cwd=app_dir) == (
        "lgos: graph 'my-graph' is served by both my_graphs:create_registry and "
        "same_name:create_registry"
    )


def test_the_worker_loads_its_targets_the_same_way(app_dir: Path, elsewhere: Path) -> None:
    # Refused before it connects anywhere: the URLs only satisfy the distributed settings.
    env = {"LGOS_POSTGRES_URI": "postgresql://unused", "LGOS_REDIS_URL": "redis://unused"}
    assert refused("worker", TARGET, cwd=elsewhere, env=env).startswith(
        "lgos: cannot import module 'my_graphs'"
    )
    line = refused(
        "worker",
        "--app-dir",
        str(app_dir),
        TARGET,
        "same_name:create_registry",
        cwd=elsewhere,
        env=env,
    )
    assert line.startswith("lgos: graph 'my-graph' is served by both")


def test_malformed_targets_are_usage_errors(app_dir: Path) -> None:
    ran = run_lgos("serve", "my_graphs", cwd=app_dir)
    assert ran.returncode == 2 and "Traceback" not in ran.stderr
    assert ran.stderr.startswith("usage: lgos serve")
    assert ran.stderr.endswith("lgos serve: error: expected MODULE:ATTR, got 'my_graphs'\n")
    ran = run_lgos("serve", cwd=app_dir, env={"LGOS_REGISTRY": ""})
    assert ran.returncode == 2 and "Traceback" not in ran.stderr
    assert ran.stderr == (
        "lgos: nothing to serve: name MODULE:FACTORY or set LGOS_REGISTRY or LGOS_PROJECT\n"
    )
    ran = run_lgos("serve", cwd=app_dir, env={"LGOS_REGISTRY": "my_graphs"})
    assert ran.returncode == 1 and "Traceback" not in ran.stderr
    assert ran.stderr == (
        "lgos: invalid settings: LGOS_REGISTRY: expected MODULE:ATTR, got 'my_graphs'\n"
    )
