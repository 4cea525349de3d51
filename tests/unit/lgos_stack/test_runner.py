"""The native stack runner's own rules: ports read once, safe stop, side-effect-free status."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from lgos_stack import jobs, runner
from lgos_stack.components import DEMO_REGISTRY, components, planned
from lgos_stack.model import HEALTH_TIMEOUT, Component, Stack
from lgos_stack.ports import PORT_VARIABLES, Ports, free_port
from lgos_stack.processes import Started, start_ticks


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DEVSTACK_STATE_DIR", str(tmp_path))
    return tmp_path


def said() -> tuple[list[str], runner.Say]:
    lines: list[str] = []
    return lines, lines.append


def default_sigint() -> None:
    """Run under a background job, the test inherits SIGINT ignored; the sleepers must not."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["sleep", "60"], start_new_session=True, preexec_fn=default_sigint)
    yield process
    process.kill()
    process.wait()


def test_ports_come_from_the_environment_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LGOS_PORT", "4321")
    ports = Ports.from_env()
    assert ports.lgos == 4321
    assert ports.gateway == 3000
    names = [c.name for c in components(ports)]
    assert names[0] == "postgres" and names[-3:] == ["gateway", "chainlit", "open-webui"]
    assert len(set(names)) == len(names)
    assert len({c.port for c in components(ports)}) == len(names)


@pytest.mark.parametrize("value", ["http", "0", "70000", ""])
def test_a_bad_port_is_refused_with_its_variable(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("REDIS_PORT", value)
    with pytest.raises(SystemExit, match="REDIS_PORT"):
        Ports.from_env()


def test_stop_never_signals_a_pid_that_now_names_another_process(
    sleeper: subprocess.Popen[bytes],
) -> None:
    ticks = start_ticks(sleeper.pid)
    assert ticks is not None
    # The recorded start time differs: the pid was reused by a process the stack didn't start.
    lines, say = said()
    runner.stop({"searxng": Started(sleeper.pid, ticks + 1)}, say)
    runner.stop({"searxng": Started(sleeper.pid, None)}, say)
    assert sleeper.poll() is None
    assert lines == []

    runner.stop({"searxng": Started(sleeper.pid, ticks)}, say)
    assert sleeper.wait(timeout=10) != 0
    assert lines == ["stopped searxng"]


def test_a_second_ctrl_c_while_stopping_stops_every_server() -> None:
    sleepers = [
        subprocess.Popen(["sleep", "60"], start_new_session=True, preexec_fn=default_sigint)
        for _ in range(3)
    ]
    started = {f"s{i}": Started(p.pid, start_ticks(p.pid)) for i, p in enumerate(sleepers)}
    lines: list[str] = []
    before = signal.getsignal(signal.SIGINT)

    def say(line: str) -> None:
        lines.append(line)
        os.kill(os.getpid(), signal.SIGINT)  # the person presses Ctrl-C again

    try:
        runner.stop(started, say)
        assert lines == ["stopped s2", "stopped s1", "stopped s0"]
        assert [p.wait(timeout=5) for p in sleepers] == [-signal.SIGINT] * 3
    finally:
        for process in sleepers:
            process.kill()
            process.wait()
    # Ctrl-C does what it did before once the stack is stopped.
    assert signal.getsignal(signal.SIGINT) is before


def test_down_reads_the_pid_file_it_wrote(sleeper: subprocess.Popen[bytes], tmp_path: Path) -> None:
    started = Started(sleeper.pid, start_ticks(sleeper.pid))
    (tmp_path / "pids.json").write_text(json.dumps({"redis": asdict(started)}))
    runner.down(said()[1])
    assert sleeper.wait(timeout=10) != 0
    assert not (tmp_path / "pids.json").exists()


def test_status_has_no_side_effects(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for variable, _ in PORT_VARIABLES.values():
        monkeypatch.setenv(variable, str(free_port()))
    calls: list[Any] = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append(a))
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: calls.append(a))
    lines, say = said()
    assert runner.status(say) == 1  # nothing listens on those ports
    # Phoenix is opt-in.
    assert len(lines) == len(PORT_VARIABLES) - 1 and all(" down  " in line for line in lines)
    assert calls == []
    assert list(tmp_path.iterdir()) == []


def test_start_keeps_no_log_descriptor_and_runs_the_setup_step(tmp_path: Path) -> None:
    steps: list[str] = []
    stack = Stack(Ports.from_env(), env={"SHARED": "from-a-job"})
    component = Component(
        name="probe",
        port=free_port(),
        args=[sys.executable, "-c", "import os; print(os.environ['SHARED'])"],
        setup=lambda component, stack: steps.append(component.name),
    )
    process = runner.start(component, stack)
    assert process.wait(timeout=10) == 0
    assert steps == ["probe"]
    log = tmp_path / "probe.log"
    assert log.read_text().strip() == "from-a-job"
    fds = Path("/proc/self/fd")
    # The listing's own descriptor is gone by the time it is read: resolve without strictness.
    assert str(log) not in {str(fd.resolve()) for fd in fds.iterdir()}


def test_a_missing_install_names_make_dev(tmp_path: Path) -> None:
    component = Component(
        name="probe", port=free_port(), args=["true"], requires=(tmp_path / "absent",)
    )
    with pytest.raises(SystemExit, match="make dev"):
        runner.start(component, Stack(Ports.from_env()))


def test_lgos_and_its_worker_serve_the_registry_setting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for variable in ("LGOS_APP_DIR", "LGOS_REGISTRY", "LGOS_PROJECT"):
        monkeypatch.delenv(variable, raising=False)
    plan = {c.name: c for c in components(Ports.from_env())}
    for name in ("lgos", "lgos-worker"):
        # No target on the command line: each reads LGOS_REGISTRY from the environment it gets.
        assert not any(":" in arg for arg in plan[name].args[3:]), plan[name].args
        assert plan[name].env["LGOS_REGISTRY"] == DEMO_REGISTRY
        assert "LGOS_APP_DIR" not in plan[name].env and "LGOS_PROJECT" not in plan[name].env
    monkeypatch.setenv("LGOS_REGISTRY", "my_graphs:create_registry")
    plan = {c.name: c for c in components(Ports.from_env())}
    assert plan["lgos-worker"].env["LGOS_REGISTRY"] == "my_graphs:create_registry"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LGOS_APP_DIR", "my-project")
    monkeypatch.setenv("LGOS_PROJECT", "../my-graph")
    plan = {c.name: c for c in components(Ports.from_env())}
    for name in ("lgos", "lgos-2", "lgos-worker"):  # they run from the repository root
        assert plan[name].env["LGOS_APP_DIR"] == str(tmp_path / "my-project")
        assert plan[name].env["LGOS_PROJECT"] == str(tmp_path.parent / "my-graph")


@pytest.mark.parametrize(("setting", "reloads"), [("1", True), ("true", True), ("0", False)])
def test_the_reload_setting_runs_lgos_and_its_worker_with_reload(
    monkeypatch: pytest.MonkeyPatch, setting: str, reloads: bool
) -> None:
    monkeypatch.delenv("LGOS_RELOAD", raising=False)
    plan = {c.name: c for c in components(Ports.from_env())}
    assert not any("--reload" in c.args for c in plan.values())
    monkeypatch.setenv("LGOS_RELOAD", setting)
    plan = {c.name: c for c in components(Ports.from_env())}
    for name in ("lgos", "lgos-2", "lgos-worker"):
        assert ("--reload" in plan[name].args) is reloads, plan[name].args
    assert not any(
        "--reload" in c.args for n, c in plan.items() if n not in {"lgos", "lgos-2", "lgos-worker"}
    )


def test_lgos_gets_the_knowledge_store_from_its_one_shot_job(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DEMO_API_VECTOR_STORE_ID", raising=False)
    plan = {c.name: c for c in components(Ports.from_env())}
    lgos, files = plan["lgos"], plan["files"]
    assert lgos.setup is jobs.prepare_knowledge
    names = list(plan)
    assert names.index("files") < names.index("lgos")  # the job needs the Files service up
    assert lgos.env["DEMO_API_FILES_BASE_URL"] == f"http://127.0.0.1:{files.port}/v1"
    assert plan["lgos-worker"].env["DEMO_API_FILES_API_KEY"] == files.env["FILES_API_KEYS"]
    ran: list[tuple[Any, ...]] = []

    def fake_job(what: str, module: str, *args: str, env: dict[str, str]) -> None:
        ran.append((what, module, env["DEMO_API_FILES_BASE_URL"]))
        Path(args[args.index("--id-file") + 1]).write_text("vs_from_job\n")

    monkeypatch.setattr(jobs, "run_job", fake_job)
    stack = Stack(Ports.from_env())
    jobs.prepare_knowledge(lgos, stack)
    assert ran == [
        (
            "knowledge-setup",
            "lgos_demo_graphs.advanced.knowledge_setup",
            lgos.env["DEMO_API_FILES_BASE_URL"],
        )
    ]
    assert stack.env["DEMO_API_VECTOR_STORE_ID"] == "vs_from_job"


def test_restart_needs_a_detached_stack_and_a_known_component(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no detached stack is running"):
        runner.restart("chainlit", said()[1])
    (tmp_path / "pids.json").write_text("{}")
    with pytest.raises(SystemExit, match="no component 'nope'; the stack has postgres"):
        runner.restart("nope", said()[1])


def test_chainlit_reaches_only_the_gateway() -> None:
    ports = Ports.from_env()
    chainlit = next(c for c in components(ports) if c.name == "chainlit")
    assert chainlit.port == 3002
    env = chainlit.env
    assert env["OPENAI_GATEWAY_BASE_URL"] == f"http://127.0.0.1:{ports.gateway}/v1"
    assert str(ports.lgos) not in " ".join(env.values())
    assert "OPENAI_API_KEY" not in env  # chainlit's CI mode overwrites that variable
    assert env["CHAINLIT_DATABASE_URL"].endswith(f":{ports.postgres}/chainlit")


def test_open_webui_is_skippable_and_runs_its_setup_job_once_healthy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ports = Ports.from_env()
    webui = next(c for c in components(ports) if c.name == "open-webui")
    assert webui.port == 3003 and webui.ready is jobs.install_open_webui_pipe
    assert webui.health_timeout > HEALTH_TIMEOUT  # a first start migrates its database
    env = webui.env
    assert env["ENABLE_PERSISTENT_CONFIG"] == "false" and env["OFFLINE_MODE"] == "true"
    assert env["ENABLE_TITLE_GENERATION"] == env["ENABLE_TAGS_GENERATION"] == "false"
    mcp = json.loads(env["TOOL_SERVER_CONNECTIONS"])[0]
    assert mcp["url"] == "http://127.0.0.1:3000/mcp" and mcp["info"]["id"] == "gw"
    monkeypatch.setenv("DEVSTACK_SKIP", "open-webui,chainlit")
    names = [c.name for c in planned(ports)]
    assert "open-webui" not in names and "chainlit" not in names and "gateway" in names
    monkeypatch.setenv("DEVSTACK_SKIP", "open-webu")
    with pytest.raises(SystemExit, match="open-webu"):
        planned(ports)


def test_with_phoenix_the_gateway_exports_its_spans_there_as_litellm(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ports = Ports.from_env()
    monkeypatch.delenv("DEVSTACK_SKIP", raising=False)
    monkeypatch.delenv("DEVSTACK_WITH", raising=False)
    untraced = next(c for c in planned(ports) if c.name == "gateway")
    assert not [name for name in untraced.env if name.startswith("OTEL_")]
    monkeypatch.setenv("DEVSTACK_WITH", "phoenix")
    plan = {c.name: c.env for c in planned(ports)}
    assert plan["gateway"]["OTEL_EXPORTER_OTLP_ENDPOINT"] == f"http://127.0.0.1:{ports.phoenix}"
    assert plan["gateway"]["OTEL_SERVICE_NAME"] == "litellm"
    assert plan["gateway"]["OTEL_RESOURCE_ATTRIBUTES"] == plan["lgos"]["OTEL_RESOURCE_ATTRIBUTES"]
    assert plan["lgos"]["OTEL_SERVICE_NAME"] == "lgos"


def test_a_kept_secret_survives_restarts_unless_the_environment_sets_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("WEBUI_SECRET_KEY", raising=False)
    first, second = (
        Stack(Ports.from_env()),
        Stack(Ports.from_env()),
    )
    jobs.keep_secret(first, "WEBUI_SECRET_KEY", "open-webui-secret")
    jobs.keep_secret(second, "WEBUI_SECRET_KEY", "open-webui-secret")
    assert len(first.env["WEBUI_SECRET_KEY"]) > 40
    assert first.env == second.env
    monkeypatch.setenv("WEBUI_SECRET_KEY", "from-env")
    third = Stack(Ports.from_env())
    jobs.keep_secret(third, "WEBUI_SECRET_KEY", "open-webui-secret")
    assert third.env["WEBUI_SECRET_KEY"] == "from-env"


def test_one_sync_republishes_to_the_gateway_then_open_webui_when_it_answers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import http.server
    import threading

    ran: list[tuple[str, tuple[str, ...]]] = []

    def fake_job(what: str, module: str, *args: str, env: dict[str, str]) -> None:
        ran.append((what, args))

    monkeypatch.setattr(jobs, "run_job", fake_job)
    monkeypatch.setenv("OPEN_WEBUI_PORT", str(free_port()))
    runner.sync(said()[1])  # Open WebUI does not answer: the gateway alone
    assert [what for what, _ in ran] == ["gateway-sync"]
    args = ran[0][1]
    assert args[args.index("--reload-pid-file") + 1] == str(tmp_path / "litellm.pid")
    assert args[args.index("--gateway-url") + 1] == f"http://127.0.0.1:{Ports.from_env().gateway}"
    assert "--reseed" not in args  # a running stack keeps the served config's operator entries

    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200 if self.path == "/health" else 404)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            return None

    server = http.server.HTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("OPEN_WEBUI_PORT", str(server.server_port))
        ran.clear()
        lines, say = said()
        runner.sync(say)
    finally:
        server.shutdown()
        server.server_close()
    assert [what for what, _ in ran] == ["gateway-sync", "open-webui-setup"]
    args = ran[1][1]
    assert args[args.index("--url") + 1] == f"http://127.0.0.1:{server.server_port}"
    assert any("open-webui" in line for line in lines)


def test_the_cli_restores_ctrl_c_that_a_background_job_ignores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Servers started by a stack that ignores SIGINT would ignore the stop's SIGINT too."""
    from lgos_stack import cli

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    monkeypatch.setattr(runner, "status", lambda say: 0)
    try:
        with pytest.raises(SystemExit):
            cli.main(["status"])
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)
