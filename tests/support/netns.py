"""A command typed in a terminal of its own, in a network namespace of its own (``unshare --net``,
root): there 127.0.0.1 is private, so a page's fixed ports (3000-3015) never meet a developer's
running stack. Chromium joins that namespace (``nsenter``) to open the pages the command serves.

The terminal is a real pseudo-terminal with the command in its foreground, so Ctrl-C is the
terminal's own (one SIGINT to the foreground process group), as a person presses it: without a
terminal ``uv run`` forwards a group's SIGINT to its child a second time."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.browser import CHROMIUM

CTRL_C = b"\x03"


def in_namespace(inode: int) -> list[int]:
    """The processes whose network namespace is ``inode``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "ns" / "net").stat().st_ino == inode:
                    found.append(int(entry.name))
            except OSError:
                pass  # gone meanwhile
    return found


class Namespaced:
    """The command's process (it stays in the namespace it made) and what it printed so far."""

    def __init__(self, process: subprocess.Popen[bytes], terminal: int, log: Path) -> None:
        self.process = process
        self.terminal = terminal
        self.log = log
        self.lines: list[str] = []
        self.namespace = self._own_namespace()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _own_namespace(self, timeout: float = 10.0) -> int:
        """The namespace's inode, once ``unshare`` has made it."""
        ours = Path("/proc/self/ns/net").stat().st_ino
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.process.poll() is None:
            theirs = Path(f"/proc/{self.process.pid}/ns/net").stat().st_ino
            if theirs != ours:
                return theirs
            time.sleep(0.05)
        pytest.fail("the command did not get a network namespace of its own")

    def _read(self) -> None:
        pending = b""
        with self.log.open("wb") as log:
            while True:
                try:
                    chunk = os.read(self.terminal, 4096)
                except OSError:
                    chunk = b""  # every writer closed the terminal
                if not chunk:
                    break
                log.write(chunk)
                log.flush()
                pending += chunk
                *whole, pending = pending.split(b"\n")
                self.lines += [line.decode(errors="replace").rstrip("\r") for line in whole]
        if pending:
            self.lines.append(pending.decode(errors="replace").rstrip("\r"))

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, line: str, timeout: float) -> str:
        """Everything printed up to ``line`` (a whole line), once it is printed."""
        deadline = time.monotonic() + timeout
        while line not in self.lines:
            if self.process.poll() is not None:
                self._reader.join(5)
                if line in self.lines:
                    break
                pytest.fail(f"the command ended ({self.process.returncode}):\n{self.output}")
            if time.monotonic() > deadline:
                pytest.fail(f"no {line!r} within {timeout:.0f}s:\n{self.output}")
            time.sleep(0.2)
        return self.output

    def chromium(self, folder: Path) -> Path:
        """An executable that starts Debian's Chromium inside the namespace (Playwright's pipe
        to the browser is inherited through ``nsenter``'s exec)."""
        wrapper = folder / "chromium-in-namespace"
        net = f"/proc/{self.process.pid}/ns/net"
        wrapper.write_text(f'#!/bin/sh\nexec nsenter --net={net} -- {CHROMIUM} "$@"\n')
        wrapper.chmod(0o755)
        return wrapper

    def ctrl_c(self, timeout: float = 120.0) -> int:
        """Press Ctrl-C in the terminal; the command's exit code once it has ended."""
        os.write(self.terminal, CTRL_C)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
            pytest.fail(f"Ctrl-C did not stop the command within {timeout:.0f}s:\n{self.output}")

    def left_running(self, timeout: float = 15.0) -> list[str]:
        """The processes still in the namespace ``timeout`` seconds after the command ended
        (their command lines); they are killed, so nothing outlives the test."""
        deadline = time.monotonic() + timeout
        while (pids := in_namespace(self.namespace)) and time.monotonic() < deadline:
            time.sleep(0.5)
        left = []
        for pid in pids:
            try:
                left.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" "))
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass  # gone meanwhile
        return [line.decode(errors="replace").strip() for line in left]


@contextmanager
def private_network(
    command: str, cwd: Path, env: Mapping[str, str], log: Path
) -> Iterator[Namespaced]:
    """``command`` (a shell line) typed in a fresh terminal, in a fresh network namespace with
    its loopback up; Ctrl-C to it afterwards if it still runs."""
    if any(shutil.which(tool) is None for tool in ("unshare", "nsenter", "setsid")):
        pytest.fail("needs util-linux's unshare, nsenter and setsid, as on the machines here")
    if os.geteuid() != 0:
        pytest.fail("needs root for a network namespace, as on the machines here")
    terminal, device = os.openpty()
    # setsid --ctty: the command leads a session whose controlling terminal is this one, and is
    # its foreground job; unshare then execs it (one process id throughout).
    process = subprocess.Popen(
        [
            "setsid",
            "--ctty",
            "unshare",
            "--net",
            "bash",
            "-c",
            f"ip link set lo up && exec {command}",
        ],
        cwd=cwd,
        env=dict(env),
        stdin=device,
        stdout=device,
        stderr=device,
    )
    os.close(device)
    try:
        inside = Namespaced(process, terminal, log)
        try:
            yield inside
        finally:
            if process.poll() is None:
                inside.ctrl_c()
            inside.left_running(timeout=0)  # killed, whatever the test made of them
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        os.close(terminal)
