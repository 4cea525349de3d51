"""The stack's start order: what each component waits for, and the side-by-side start."""

from __future__ import annotations

import threading
import time

import pytest
from lgos_stack import order, runner
from lgos_stack.components import components
from lgos_stack.model import Component, Stack
from lgos_stack.ports import Ports


def test_every_component_says_what_it_needs_and_needs_only_earlier_ones() -> None:
    names = [c.name for c in components(Ports.from_env())]
    assert set(order.NEEDS) == set(names)
    for name in names:
        needed = (
            order.NEEDS[name] + order.READY_NEEDS.get(name, ()) + order.SETUP_NEEDS.get(name, ())
        )
        assert set(needed) <= set(names), name
        if name not in order.READY_NEEDS:  # COMPONENTS stays a valid one-by-one order
            assert all(names.index(n) < names.index(name) for n in needed), name


def test_the_slow_starts_are_not_held_back() -> None:
    names = [c.name for c in components(Ports.from_env())]
    assert order.needs("open-webui", names) == ()
    assert order.ready_needs("open-webui", names) == ("gateway",)
    assert "embeddings" not in order.needs("files", names)
    # The second instance and the worker wait for the first one's setup, not its health.
    for name in ("lgos-2", "lgos-worker"):
        assert "lgos" not in order.needs(name, names)
        assert order.setup_needs(name, names) == ("lgos",)
    assert order.needs("gateway", [n for n in names if n != "lgos-2"]) == (
        "lgos",
        "mcp-db",
        "files",
    )


def test_components_start_side_by_side_once_their_needs_are_healthy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    events: list[str] = []
    lock = threading.Lock()
    started = {name: threading.Event() for name in ("open-webui", "lgos-2", "lgos-worker")}
    # A component turns healthy only once these have started (or after 5 s, which fails the
    # test): they must not wait for its health, however the threads are scheduled.
    held_until = {"postgres": ("open-webui",), "lgos": ("lgos-2", "lgos-worker")}

    def fake_start(component: Component, stack: Stack) -> object:
        with lock:
            events.append(f"start {component.name}")
        if component.name in started:
            started[component.name].set()
        return type("P", (), {"pid": 1})()

    def fake_wait(component: Component, process: object) -> None:
        for name in held_until.get(component.name, ()):
            started[name].wait(5)
        time.sleep(0.3 if component.name == "open-webui" else 0.01)
        with lock:
            events.append(f"healthy {component.name}")

    monkeypatch.setattr(runner, "start", fake_start)
    monkeypatch.setattr(runner, "wait_healthy", fake_wait)
    monkeypatch.setattr(runner.Started, "of", staticmethod(lambda pid: runner.Started(pid, None)))
    plan = [c for c in components(Ports.from_env()) if c.name != "open-webui"]
    plan = [Component(name=c.name, port=c.port, args=[]) for c in plan]
    plan.append(Component(name="open-webui", port=1, args=[]))
    said: list[str] = []
    runner.start_all(plan, Stack(Ports.from_env()), {}, {}, said.append)
    assert events.index("start open-webui") < events.index("healthy postgres")
    for name in ("lgos-2", "lgos-worker"):
        assert events.index("start lgos") < events.index(f"start {name}")
        assert events.index(f"start {name}") < events.index("healthy lgos")
    assert events.index("healthy lgos-2") < events.index("start gateway")
    assert events.index("healthy gateway") < events.index("start chainlit")
    assert sorted(line.split()[0] for line in said) == sorted(c.name for c in plan)
    assert all(line.rstrip().endswith("s") and " in " in line for line in said)


def test_a_failed_component_stops_the_start(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_start(component: Component, stack: Stack) -> object:
        if component.name == "files":
            raise SystemExit("files exited with 1")
        return type("P", (), {"pid": 1})()

    monkeypatch.setattr(runner, "start", fake_start)
    monkeypatch.setattr(runner, "wait_healthy", lambda component, process: None)
    monkeypatch.setattr(runner.Started, "of", staticmethod(lambda pid: runner.Started(pid, None)))
    plan = [Component(name=c.name, port=c.port, args=[]) for c in components(Ports.from_env())]
    started: dict[str, runner.Started] = {}
    with pytest.raises(SystemExit, match="files exited with 1"):
        runner.start_all(plan, Stack(Ports.from_env()), {}, started, lambda line: None)
    assert "lgos" not in started and "gateway" not in started
