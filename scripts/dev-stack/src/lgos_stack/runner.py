"""The stack runner: start the components side by side, each once what it needs is healthy
(``lgos_stack.order``), stop them in reverse order of start, and the pid file a detached stack
leaves behind.

What the runner reports goes through ``say`` (the CLI prints it as it happens).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path

from lgos_stack import jobs, keys, order
from lgos_stack.components import TRACE_PROJECT, components, planned, traced
from lgos_stack.model import Component, Stack
from lgos_stack.paths import ROOT, state_dir
from lgos_stack.ports import PORT_VARIABLES, Ports
from lgos_stack.processes import (
    Started,
    Wait,
    demote,
    http_ok,
    service_user,
    stop_group,
    tcp_open,
    wait_for,
)

Say = Callable[[str], None]


def healthy(component: Component) -> bool:
    if component.tcp_health:
        return tcp_open(component.port)
    return http_ok(component.health_url)


def port_in_use(component: Component) -> str:
    """One line naming the cause and the fix, instead of the server's own bind traceback."""
    variable = PORT_VARIABLES.get(component.name.replace("-", "_"), ("its port variable", 0))[0]
    return (
        f"{component.name} cannot start: port {component.port} is in use by another program; "
        f"stop it, or move {component.name} with {variable}=<a free port>"
    )


def start(component: Component, stack: Stack) -> subprocess.Popen[bytes]:
    if healthy(component):
        raise SystemExit(f"port {component.port} already serves something: is a stack running?")
    if tcp_open(component.port):
        raise SystemExit(port_in_use(component))
    missing = [path for path in component.requires if not path.exists()]
    if missing:
        raise SystemExit(
            f"{component.name} is not installed ({missing[0]} is missing): run `make dev`, "
            "which installs it under .tools/"
        )
    if component.setup is not None:
        component.setup(component, stack)
    # The child keeps its own descriptor; ours is closed as soon as it has one.
    with (state_dir() / f"{component.name}.log").open("ab") as log:
        return subprocess.Popen(
            component.args,
            env={**os.environ, **stack.env, **component.env},
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            start_new_session=True,
            preexec_fn=demote(service_user() if component.service_user else None),
        )


def wait_healthy(component: Component, process: subprocess.Popen[bytes]) -> None:
    waited = wait_for(lambda: healthy(component), process, component.health_timeout, 0.2)
    log = state_dir() / f"{component.name}.log"
    if waited is Wait.EXITED:
        lines = [line.strip() for line in log.read_text(errors="replace").splitlines()]
        last = next((line for line in reversed(lines) if line), "no output")
        raise SystemExit(
            f"{component.name} exited with {process.returncode} ({last[:200]}); its log: {log}"
        )
    if waited is Wait.TIMEOUT:
        raise SystemExit(
            f"{component.name} not healthy after {component.health_timeout:.0f}s; its log: {log}"
        )


def launch(component: Component, stack: Stack) -> subprocess.Popen[bytes]:
    """Start ``component``, wait until it is healthy, then run its ready step."""
    process = start(component, stack)
    wait_healthy(component, process)
    if component.ready is not None:
        component.ready(component, stack)
    return process


def stop(started: dict[str, Started], say: Say) -> None:
    """Stop what the stack started, last first; a pid that now names another process, or one
    already gone, is never signalled."""
    with ctrl_c_ignored():
        for name, process in reversed(list(started.items())):
            if stop_group(process):
                with contextlib.suppress(OSError):  # a closed stdout must not leave servers running
                    say(f"stopped {name}")


@contextlib.contextmanager
def ctrl_c_ignored() -> Iterator[None]:
    """A second Ctrl-C while the stack stops would break off the loop and leave the rest of
    the servers running; it is ignored until every one is stopped."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def model_notice() -> str:
    if os.environ.get("DEMO_API_OPENAI_API_KEY"):
        model = os.environ.get("DEMO_API_OPENAI_MODEL", "gpt-4.1-mini")
        base = os.environ.get("DEMO_API_OPENAI_BASE_URL", "OpenAI's default URL")
        return f"graphs use the real model {model} at {base}"
    return (
        "graphs use offline-model, the deterministic stand-in "
        "(set DEMO_API_OPENAI_API_KEY for a real model)"
    )


def summary(stack: Stack, plan: list[Component]) -> list[str]:
    """Where a developer finds each entry point of a healthy stack, and with which key."""
    ports, state = stack.ports, state_dir()
    gateway_key = keys.shown("OPENAI_GATEWAY_API_KEY", keys.DEV_GATEWAY_KEY)
    lgos_key = keys.shown("LGOS_API_KEY", keys.LGOS_DEV_KEY)
    store = stack.env.get("DEMO_API_VECTOR_STORE_ID") or os.environ.get(
        "DEMO_API_VECTOR_STORE_ID", "?"
    )
    user, _ = keys.chainlit_login()
    password = keys.shown("CHAINLIT_PASSWORD", keys.CHAINLIT_DEV_PASSWORD)
    lines = [
        f"\nOpenAI base URL: http://127.0.0.1:{ports.gateway}/v1  (gateway, key {gateway_key})",
        f"LGOS directly:   http://127.0.0.1:{ports.lgos}/v1  (key {lgos_key}; {model_notice()})",
        f"Files service:   http://127.0.0.1:{ports.files}/v1  (key: FILES_API_KEYS, default "
        f"{keys.FILES_DEV_KEY}; local disk under {state / 'files'}; MiniLM semantic search)",
        f"Knowledge store: {store}  (advanced-graph's reviewed notes, in the Files service)",
        f"Chainlit UI:     http://127.0.0.1:{ports.chainlit}  (login {user} / {password})",
    ]
    if any(c.name == "open-webui" for c in plan):
        admin = keys.open_webui_admin()
        shown = keys.shown("WEBUI_ADMIN_PASSWORD", keys.OPEN_WEBUI_DEV_PASSWORD)
        lines.append(
            f"Open WebUI:      http://127.0.0.1:{ports.open_webui}  "
            f"(login {admin['WEBUI_ADMIN_EMAIL']} / {shown})"
        )
    names = {c.name for c in plan}
    if "prometheus" in names:
        lines.append(
            f"Prometheus:      http://127.0.0.1:{ports.prometheus}  "
            "(scrapes /metrics of LGOS, its worker and Files every 2 s)"
        )
    if "phoenix" in names:
        lines.append(
            f"Phoenix traces:  http://127.0.0.1:{ports.phoenix}  "
            f"(project {TRACE_PROJECT}: LGOS, its worker and Files send their spans)"
        )
    lines.append(f"logs: {state}/")
    return lines


def pid_file() -> Path:
    return state_dir() / "pids.json"


def record(started: dict[str, Started]) -> None:
    pid_file().write_text(json.dumps({name: asdict(process) for name, process in started.items()}))


def recorded() -> dict[str, Started]:
    entries = json.loads(pid_file().read_text())
    return {
        # A pid file of an older runner holds bare pids: without a start time, none is ours.
        name: Started(**entry) if isinstance(entry, dict) else Started(int(entry), None)
        for name, entry in entries.items()
    }


def start_all(
    plan: list[Component],
    stack: Stack,
    processes: dict[str, subprocess.Popen[bytes]],
    started: dict[str, Started],
    say: Say,
) -> None:
    """Start every planned component as soon as what it needs (``lgos_stack.order``) is
    healthy, side by side, each saying how long it took; the first failure stops the start
    (raised here once every component under way has come to rest)."""
    names = [c.name for c in plan]
    done = {name: threading.Event() for name in names}
    set_up = {name: threading.Event() for name in names}
    failed: list[BaseException] = []
    lock = threading.Lock()

    def wait_for_all(needed: tuple[str, ...], events: dict[str, threading.Event] = done) -> bool:
        for name in needed:
            while not events[name].wait(0.1):
                if failed:
                    return False
        return not failed

    def bring_up(component: Component) -> None:
        try:
            if not wait_for_all(order.needs(component.name, names)):
                return
            if not wait_for_all(order.setup_needs(component.name, names), set_up):
                return
            begun = time.monotonic()
            with lock:  # one setup step or spawn at a time: they share the stack's environment
                if failed:
                    return
                process = start(component, stack)
                processes[component.name] = process
                started[component.name] = Started.of(process.pid)
            set_up[component.name].set()
            wait_healthy(component, process)
            took = time.monotonic() - begun
            if component.ready is not None:
                if not wait_for_all(order.ready_needs(component.name, names)):
                    return
                component.ready(component, stack)
            scheme = "tcp" if component.tcp_health else "http"
            say(
                f"{component.name:14} healthy on {scheme}://127.0.0.1:{component.port} "
                f"in {took:.1f}s"
            )
            done[component.name].set()
        except BaseException as error:  # a SystemExit from wait_healthy too
            failed.append(error)

    threads = [threading.Thread(target=bring_up, args=(c,), daemon=True) for c in plan]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(0.2)
    if failed:
        raise failed[0]


def up(detach: bool, say: Say, warn: Say) -> int:
    """Start the planned components; detached, record them and return, else run until Ctrl-C
    (0) or until one stops by itself (1)."""
    stack = Stack(Ports.from_env())
    plan = planned(stack.ports)
    state_dir().mkdir(parents=True, exist_ok=True)
    started: dict[str, Started] = {}
    processes: dict[str, subprocess.Popen[bytes]] = {}
    keep_running = False
    on_ctrl_c = signal.getsignal(signal.SIGINT)
    try:
        begun = time.monotonic()
        start_all(plan, stack, processes, started, say)
        say(f"stack healthy in {time.monotonic() - begun:.1f}s")
        for line in summary(stack, plan):
            say(line)
        if detach:
            record(started)
            keep_running = True
            return 0
        say("Ctrl-C stops the stack.")
        # Ctrl-C sets a flag rather than raising: a second SIGINT close behind the first (uv run
        # forwards the group's one to its child again) must not cut the stop short.
        interrupted = threading.Event()
        signal.signal(signal.SIGINT, lambda *_: interrupted.set())
        while all(p.poll() is None for p in processes.values()):
            if interrupted.wait(0.5):
                return 0
        failed = [name for name, p in processes.items() if p.poll() is not None]
        warn(f"{', '.join(failed)} stopped unexpectedly; see {state_dir()}/")
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        if not keep_running:
            stop(started, say)
        signal.signal(signal.SIGINT, on_ctrl_c)


def down(say: Say) -> None:
    if not pid_file().exists():
        say("no detached stack is running")
        return
    stop(recorded(), say)
    pid_file().unlink()


def restart(name: str, say: Say) -> None:
    """Stop one component of a detached stack and start it again (setup step included)."""
    if not pid_file().exists():
        raise SystemExit("no detached stack is running")
    stack = Stack(Ports.from_env())
    started = recorded()
    every = components(stack.ports)
    # A running Phoenix keeps receiving the restarted service's traces.
    every = traced(every, stack.ports) if "phoenix" in started else every
    plan = {component.name: component for component in every}
    if name not in plan:
        raise SystemExit(f"no component {name!r}; the stack has {', '.join(plan)}")
    if name in started:
        stop({name: started[name]}, say)
    component = plan[name]
    process = launch(component, stack)
    started[name] = Started.of(process.pid)
    record(started)
    say(f"{name:14} healthy on {component.health_url}")


def sync(say: Say) -> None:
    """One catalog sync of a running stack: LGOS's graphs into LiteLLM (restarted when the
    catalog changed), then into Open WebUI's model entries when Open WebUI answers; Chainlit
    reads the gateway's catalog itself, within its cache's TTL."""
    stack = Stack(Ports.from_env())
    jobs.resync_gateway_catalog(stack)
    say(f"gateway         serves LGOS's catalog on http://127.0.0.1:{stack.ports.gateway}")
    plan = {component.name: component for component in components(stack.ports)}
    if healthy(plan["open-webui"]):
        jobs.sync_open_webui_models(stack)
        say(f"open-webui      model entries synced on http://127.0.0.1:{stack.ports.open_webui}")


def status(say: Say) -> int:
    code = 0
    for component in planned(Ports.from_env()):
        ok = healthy(component)
        code |= 0 if ok else 1
        say(f"{component.name:14} {'healthy' if ok else 'down'}  {component.health_url}")
    return code
