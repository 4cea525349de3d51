"""The engine's files live under the state folder (the socket moves to /tmp only when its path is
too long), and a pid file never makes the engine signal a process that is not its dockerd."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
from lgos_stack.containers.engine import (
    SOCKET_PATH_MAX,
    Engine,
    EngineError,
    engines,
    others,
    ping,
    stop,
    wait_for_others,
)


def test_everything_lives_under_the_engine_root(tmp_path: Path) -> None:
    engine = Engine(tmp_path / "docker")
    command = engine.command()
    assert command[0] == "dockerd"
    options = dict(zip(command[1::2], command[2::2], strict=True))
    assert options["--host"] == f"unix://{tmp_path}/docker/run/docker.sock" == engine.host
    assert options["--data-root"] == str(tmp_path / "docker" / "data")
    assert options["--exec-root"] == str(tmp_path / "docker" / "run" / "exec")
    assert options["--pidfile"] == str(tmp_path / "docker" / "docker.pid")
    assert engine.env()["DOCKER_HOST"] == engine.host


def test_a_socket_path_too_long_for_the_kernel_moves_to_tmp(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * SOCKET_PATH_MAX) / "docker"
    engine = Engine(deep)
    assert str(engine.socket).startswith("/tmp/lgos-docker-")
    assert len(str(engine.socket)) <= SOCKET_PATH_MAX
    assert engine.run_dir == Engine(deep).run_dir != Engine(tmp_path / "other").run_dir
    assert str(deep / "data") in engine.command()  # the data stays in the checkout


def test_a_pid_file_naming_another_process_is_never_signalled(tmp_path: Path) -> None:
    engine = Engine(tmp_path)
    engine.pidfile.write_text(str(os.getpid()))  # alive, but not a dockerd of this root
    assert engine.pid() is None
    assert stop(engine, lambda _: None) is False
    engine.pidfile.write_text("not a pid")
    assert engine.pid() is None


def test_ping_reads_the_engine_answer(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    assert ping(path) is False  # nothing listens
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        server.listen(2)

        def answer(body: bytes) -> None:
            conn, _ = server.accept()
            with conn:
                conn.recv(1024)
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n" + body)

        for body, expected in ((b"OK", True), (b"no", False)):
            thread = threading.Thread(target=answer, args=(body,))
            thread.start()
            assert ping(path) is expected
            thread.join()


def test_another_checkouts_engine_blocks_starting_one(tmp_path: Path) -> None:
    """One engine per machine: a running dockerd of another root is named, never signalled."""
    other = tmp_path / "dockerd"
    shutil.copy("/bin/sleep", other)  # a process the machine lists as a dockerd
    process = subprocess.Popen([str(other), "30"])
    try:
        engine = Engine(tmp_path / "mine")
        deadline = time.monotonic() + 5
        while process.pid not in engines() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.pid in others(engine)
        with pytest.raises(EngineError, match=f"pid {process.pid}"):
            wait_for_others(engine, 0.0, lambda _: None)
        assert process.poll() is None
    finally:
        process.kill()
        process.wait()
    assert process.pid not in engines()
