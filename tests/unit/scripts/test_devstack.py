"""The native stack runner's own rules: ports read once, safe stop, side-effect-free status."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.servers import ROOT, free_port


@pytest.fixture
def devstack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.setenv("DEVSTACK_STATE_DIR", str(tmp_path))
    spec = importlib.util.spec_from_file_location("devstack", ROOT / "scripts" / "devstack.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses resolve string annotations through sys.modules.
    monkeypatch.setitem(sys.modules, "devstack", module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["sleep", "60"], start_new_session=True)
    yield process
    process.kill()
    process.wait()


def test_ports_come_from_the_environment_once(
    devstack: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LGOS_PORT", "4321")
    ports = devstack.Ports.from_env()
    assert ports.lgos == 4321
    assert ports.gateway == 3000
    names = [c.name for c in devstack.components(ports)]
    assert names[0] == "postgres" and names[-3:] == ["gateway", "chainlit", "open-webui"]
    assert len(set(names)) == len(names)
    assert len({c.port for c in devstack.components(ports)}) == len(names)


@pytest.mark.parametrize("value", ["http", "0", "70000", ""])
def test_a_bad_port_is_refused_with_its_variable(
    devstack: ModuleType, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("REDIS_PORT", value)
    with pytest.raises(SystemExit, match="REDIS_PORT"):
        devstack.Ports.from_env()


def test_stop_never_signals_a_pid_that_now_names_another_process(
    devstack: ModuleType, sleeper: subprocess.Popen[bytes]
) -> None:
    ticks = devstack.start_ticks(sleeper.pid)
    assert ticks is not None
    # The recorded start time differs: the pid was reused by a process the stack didn't start.
    devstack.stop({"searxng": devstack.Started(sleeper.pid, ticks + 1)})
    devstack.stop({"searxng": devstack.Started(sleeper.pid, None)})
    assert sleeper.poll() is None

    devstack.stop({"searxng": devstack.Started(sleeper.pid, ticks)})
    assert sleeper.wait(timeout=10) != 0


def test_down_reads_the_pid_file_it_wrote(
    devstack: ModuleType, sleeper: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    started = devstack.Started(sleeper.pid, devstack.start_ticks(sleeper.pid))
    (tmp_path / "pids.json").write_text(json.dumps({"redis": devstack.asdict(started)}))
    devstack.down()
    assert sleeper.wait(timeout=10) != 0
    assert not (tmp_path / "pids.json").exists()


def test_status_has_no_side_effects(
    devstack: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for variable, _ in devstack.PORT_VARIABLES.values():
        monkeypatch.setenv(variable, str(free_port()))
    calls: list[Any] = []
    monkeypatch.setattr(devstack.subprocess, "run", lambda *a, **k: calls.append(a))
    monkeypatch.setattr(devstack.subprocess, "Popen", lambda *a, **k: calls.append(a))
    assert devstack.status() == 1  # nothing listens on those ports
    assert calls == []
    assert list(tmp_path.iterdir()) == []


def test_start_keeps_no_log_descriptor_and_runs_the_setup_step(
    devstack: ModuleType, tmp_path: Path
) -> None:
    steps: list[str] = []
    stack = devstack.Stack(devstack.Ports.from_env(), env={"SHARED": "from-a-job"})
    component = devstack.Component(
        name="probe",
        port=free_port(),
        args=[sys.executable, "-c", "import os; print(os.environ['SHARED'])"],
        setup=lambda component, stack: steps.append(component.name),
    )
    process = devstack.start(component, stack)
    assert process.wait(timeout=10) == 0
    assert steps == ["probe"]
    log = tmp_path / "probe.log"
    assert log.read_text().strip() == "from-a-job"
    fds = Path("/proc/self/fd")
    # The listing's own descriptor is gone by the time it is read: resolve without strictness.
    assert str(log) not in {str(fd.resolve()) for fd in fds.iterdir()}


def test_a_missing_install_names_make_dev(devstack: ModuleType, tmp_path: Path) -> None:
    component = devstack.Component(
        name="probe", port=free_port(), args=["true"], requires=(tmp_path / "absent",)
    )
    with pytest.raises(SystemExit, match="make dev"):
        devstack.start(component, devstack.Stack(devstack.Ports.from_env()))


def test_lgos_gets_the_knowledge_store_from_its_one_shot_job(
    devstack: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DEMO_API_VECTOR_STORE_ID", raising=False)
    plan = {c.name: c for c in devstack.components(devstack.Ports.from_env())}
    lgos, files = plan["lgos"], plan["files"]
    assert lgos.setup is devstack.prepare_knowledge
    names = list(plan)
    assert names.index("files") < names.index("lgos")  # the job needs the Files service up
    assert lgos.env["DEMO_API_FILES_BASE_URL"] == f"http://127.0.0.1:{files.port}/v1"
    assert plan["lgos-worker"].env["DEMO_API_FILES_API_KEY"] == files.env["FILES_API_KEYS"]
    ran: list[tuple[Any, ...]] = []

    def fake_job(what: str, module: str, *args: str, env: dict[str, str]) -> None:
        ran.append((what, module, env["DEMO_API_FILES_BASE_URL"]))
        Path(args[args.index("--id-file") + 1]).write_text("vs_from_job\n")

    monkeypatch.setattr(devstack, "run_job", fake_job)
    stack = devstack.Stack(devstack.Ports.from_env())
    devstack.prepare_knowledge(lgos, stack)
    assert ran == [
        (
            "knowledge-setup",
            "lgos_demo_graphs.advanced.knowledge_setup",
            lgos.env["DEMO_API_FILES_BASE_URL"],
        )
    ]
    assert stack.env["DEMO_API_VECTOR_STORE_ID"] == "vs_from_job"


def test_restart_needs_a_detached_stack_and_a_known_component(
    devstack: ModuleType, tmp_path: Path
) -> None:
    with pytest.raises(SystemExit, match="no detached stack is running"):
        devstack.restart("chainlit")
    (tmp_path / "pids.json").write_text("{}")
    with pytest.raises(SystemExit, match="no component 'nope'; the stack has postgres"):
        devstack.restart("nope")


def test_chainlit_reaches_only_the_gateway(devstack: ModuleType) -> None:
    ports = devstack.Ports.from_env()
    chainlit = next(c for c in devstack.components(ports) if c.name == "chainlit")
    assert chainlit.port == 3002
    env = chainlit.env
    assert env["OPENAI_GATEWAY_BASE_URL"] == f"http://127.0.0.1:{ports.gateway}/v1"
    assert str(ports.lgos) not in " ".join(env.values())
    assert "OPENAI_API_KEY" not in env  # chainlit's CI mode overwrites that variable
    assert env["CHAINLIT_DATABASE_URL"].endswith(f":{ports.postgres}/chainlit")


def test_open_webui_is_skippable_and_runs_its_setup_job_once_healthy(
    devstack: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    ports = devstack.Ports.from_env()
    webui = next(c for c in devstack.components(ports) if c.name == "open-webui")
    assert webui.port == 3003 and webui.ready is devstack.install_open_webui_pipe
    assert webui.health_timeout > devstack.HEALTH_TIMEOUT  # a first start migrates its database
    env = webui.env
    assert env["ENABLE_PERSISTENT_CONFIG"] == "false" and env["OFFLINE_MODE"] == "true"
    assert env["ENABLE_TITLE_GENERATION"] == env["ENABLE_TAGS_GENERATION"] == "false"
    mcp = json.loads(env["TOOL_SERVER_CONNECTIONS"])[0]
    assert mcp["url"] == "http://127.0.0.1:3000/mcp" and mcp["info"]["id"] == "gw"
    monkeypatch.setenv("DEVSTACK_SKIP", "open-webui,chainlit")
    names = [c.name for c in devstack.planned(ports)]
    assert "open-webui" not in names and "chainlit" not in names and "gateway" in names
    monkeypatch.setenv("DEVSTACK_SKIP", "open-webu")
    with pytest.raises(SystemExit, match="open-webu"):
        devstack.planned(ports)


def test_a_kept_secret_survives_restarts_unless_the_environment_sets_one(
    devstack: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WEBUI_SECRET_KEY", raising=False)
    first, second = (
        devstack.Stack(devstack.Ports.from_env()),
        devstack.Stack(devstack.Ports.from_env()),
    )
    devstack.keep_secret(first, "WEBUI_SECRET_KEY", "open-webui-secret")
    devstack.keep_secret(second, "WEBUI_SECRET_KEY", "open-webui-secret")
    assert len(first.env["WEBUI_SECRET_KEY"]) > 40
    assert first.env == second.env
    monkeypatch.setenv("WEBUI_SECRET_KEY", "from-env")
    third = devstack.Stack(devstack.Ports.from_env())
    devstack.keep_secret(third, "WEBUI_SECRET_KEY", "open-webui-secret")
    assert third.env["WEBUI_SECRET_KEY"] == "from-env"
