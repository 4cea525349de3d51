"""lgos-litellm-serve's restart handshake, with a stand-in proxy (a sleeping script)."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from lgos_gateways.catalog import CatalogError
from lgos_gateways.litellm_serve import child_file
from lgos_gateways.litellm_sync import reload_proxy

from tests.support.servers import ROOT, free_port


def wait_for(condition: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.fixture
def stand_in_proxy(tmp_path: Path) -> Path:
    """Takes LiteLLM's arguments and sleeps: only its process identity matters here."""
    script = tmp_path / "litellm"
    script.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(600)\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_a_reload_waits_for_the_new_proxy_and_the_pid_files_go_with_the_supervisor(
    tmp_path: Path, stand_in_proxy: Path
) -> None:
    pid_file = tmp_path / "litellm.pid"
    supervisor = subprocess.Popen(
        [
            *(sys.executable, "-m", "lgos_gateways.litellm_serve"),
            *("--config", str(tmp_path / "litellm.yaml"), "--port", str(free_port())),
            *("--pid-file", str(pid_file), "--litellm", str(stand_in_proxy)),
        ],
        env={**os.environ, "OPENAI_GATEWAY_API_KEY": "sk-test"},
        cwd=ROOT,
    )
    try:
        wait_for(lambda: child_file(pid_file).exists())
        assert int(pid_file.read_text()) == supervisor.pid
        first = child_file(pid_file).read_text()
        reload_proxy(pid_file, timeout=15)
        second = child_file(pid_file).read_text()
        assert second != first  # the old proxy is gone before the sync checks the catalog
        with pytest.raises(ProcessLookupError):
            os.kill(int(first), 0)
        supervisor.send_signal(signal.SIGTERM)
        assert supervisor.wait(timeout=20) == 0
    finally:
        supervisor.kill()
    assert not pid_file.exists() and not child_file(pid_file).exists()
    with pytest.raises(CatalogError, match="not running"):
        reload_proxy(pid_file, timeout=1)
