"""Server processes: health polling's three outcomes, start-up until healthy, a stop that
escalates to SIGKILL, and the command lines the stack, tests and benchmarks share."""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import fields
from pathlib import Path

import pytest
from lgos_stack.ports import PORT_VARIABLES, Ports, free_port
from lgos_stack.processes import Wait, http_ok, interrupt, serve, wait_for
from lgos_stack.servers import postgres_command, redis_command

IGNORES_SIGINT = (
    "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "print('ready', flush=True); time.sleep(60)"
)


def test_wait_for_reports_ready_exited_and_timeout() -> None:
    assert wait_for(lambda: True, None, timeout=0) is Wait.READY
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    assert wait_for(lambda: False, done, timeout=5) is Wait.EXITED
    started = time.monotonic()
    assert wait_for(lambda: False, None, timeout=0.2, interval=0.05) is Wait.TIMEOUT
    assert 0.2 <= time.monotonic() - started < 2


def test_serve_waits_for_health_then_stops_the_server(tmp_path: Path) -> None:
    port = free_port()
    args = ["http.server", str(port), "--bind", "127.0.0.1"]
    with serve(args, port=port, env={}, log=tmp_path / "http.log", health_path="/") as server:
        assert server.url == f"http://127.0.0.1:{port}"
        assert http_ok(f"{server.url}/")
    assert server.process.poll() is not None
    assert not http_ok(f"{server.url}/")


def test_serve_reports_an_early_exit_with_or_without_a_log(tmp_path: Path) -> None:
    port = free_port()
    with (
        pytest.raises(RuntimeError, match=r"(?s)exited early:\n.*unrecognized arguments"),
        serve(["http.server", "--no-such-option"], port=port, env={}, log=tmp_path / "x.log"),
    ):
        pass
    with (
        pytest.raises(RuntimeError, match=r"http\.server exited early"),
        serve(["http.server", "--no-such-option"], port=port, env={}, log=None),
    ):
        pass


def test_interrupt_kills_what_ignores_sigint() -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", IGNORES_SIGINT], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline() == "ready\n"
    interrupt(process, timeout=0.3)
    assert process.returncode == -9


def test_every_port_has_its_variable_and_a_distinct_fixed_default() -> None:
    assert list(PORT_VARIABLES) == [field.name for field in fields(Ports)]
    defaults = [default for _, default in PORT_VARIABLES.values()]
    assert len(set(defaults)) == len(defaults) and all(3000 <= p <= 3015 for p in defaults)
    assert PORT_VARIABLES["gateway"] == ("OPENAI_GATEWAY_PORT", 3000)


def test_servers_listen_on_loopback_only(tmp_path: Path) -> None:
    redis = redis_command(3008)
    assert redis[redis.index("--bind") + 1] == "127.0.0.1" and "--save" in redis
    postgres = postgres_command(tmp_path, 3001)
    assert "listen_addresses=127.0.0.1" in postgres and "unix_socket_directories=" in postgres
    assert postgres[postgres.index("-p") + 1] == "3001"
