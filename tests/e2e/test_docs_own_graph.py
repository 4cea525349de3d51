"""The "serve a graph you already have" page, executed exactly as written from an empty folder:
its files written as titled, its commands run in a shell with the workspace's venv on ``PATH``
(what ``source .venv/bin/activate`` does), and the output it shows compared with what came out.

The page names port 3004, which belongs to a developer's running stack: the commands run in a
network namespace of their own (``unshare --net``, root), where 127.0.0.1:3004 is private."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.socket

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "how-to" / "plug-in-a-graph.md"
FENCE = re.compile(r'^```(\w+)(?: title="([^"]+)")?\n(.*?)^```\n', re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Block:
    language: str
    title: str | None
    text: str


def first_section(page: Path) -> list[Block]:
    """The fenced blocks before the page's first ``##`` heading: the walk-through."""
    walk_through = page.read_text().split("\n## ", 1)[0]
    return [Block(*match.groups()) for match in FENCE.finditer(walk_through)]


def test_the_page_runs_as_written_from_an_empty_folder(tmp_path: Path) -> None:
    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.fail("needs root and util-linux's unshare, as on the machines this runs on")
    blocks = first_section(PAGE)
    assert [(b.language, b.title) for b in blocks] == [
        ("python", "my_graphs.py"),
        ("bash", None),
        ("python", "ask.py"),
        ("bash", None),
        ("text", None),
    ]
    graph, serve, ask, run, shown = blocks
    empty = tmp_path / "my-folder"
    empty.mkdir()
    for block in (graph, ask):
        assert block.title is not None
        (empty / block.title).write_text(block.text)
    script = f"""
set -euo pipefail
ip link set lo up
export PATH={shlex.quote(str(Path(sys.executable).parent))}:"$PATH"
cd {shlex.quote(str(empty))}
{serve.text.strip()} > serve.log 2>&1 &
for _ in $(seq 600); do
  python -c "import socket; socket.create_connection(('127.0.0.1', 3004), 1)" 2>/dev/null && break
  sleep 0.1
done
{run.text.strip()}
kill %1
wait %1 || true
"""
    # No LGOS setting of the test session leaks in: the page assumes a fresh shell.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LGOS_", "OPENAI_"))}
    done = subprocess.run(
        ["unshare", "--net", "bash", "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    log = (empty / "serve.log").read_text() if (empty / "serve.log").exists() else ""
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}\n{log}"
    assert done.stdout == shown.text, log
    assert "Traceback" not in log
