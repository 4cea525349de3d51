"""``lgos serve --workers N``: what the settings accept, and the one-line refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lgos.cli
import pytest
from lgos.cli import main
from lgos.settings import LGOSSettings
from lgos.workers import WorkersError, check_background, worker_environment

from tests.support import graphs
from tests.support.process_graphs import TARGET
from tests.support.process_graphs import create_registry as process_registry

SHARED: Any = {"postgres_uri": "postgresql://x", "redis_url": "redis://x"}


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("LGOS_POSTGRES_URI", "LGOS_REDIS_URL", "LGOS_WORKERS", "LGOS_RELOAD"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def refusal(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    if exited.value.code == 2:
        return capsys.readouterr().err
    return str(exited.value.code) + "\n"


def test_one_process_is_the_default_and_the_setting_is_bounded(
    clean_env: pytest.MonkeyPatch,
) -> None:
    assert LGOSSettings().workers == 1
    assert LGOSSettings(workers=4, **SHARED).workers == 4
    clean_env.setenv("LGOS_WORKERS", "0")
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        LGOSSettings()
    with pytest.raises(ValueError, match="less than or equal to 64"):
        LGOSSettings(workers=65, **SHARED)


def test_several_processes_need_shared_postgres_and_redis(
    clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert refusal(["serve", TARGET, "--workers", "2"], capsys) == (
        "lgos: invalid settings: LGOS_WORKERS above 1 needs LGOS_POSTGRES_URI and "
        "LGOS_REDIS_URL (the processes share no memory)\n"
    )


def test_a_bad_count_is_named_by_its_variable(
    clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert refusal(["serve", TARGET, "--workers", "0"], capsys) == (
        "lgos: invalid settings: LGOS_WORKERS: Input should be greater than or equal to 1\n"
    )
    clean_env.setenv("LGOS_WORKERS", "many")
    assert "LGOS_WORKERS: Input should be a valid integer" in refusal(["serve", TARGET], capsys)


def test_reload_does_not_combine_with_several_processes(
    clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clean_env.setenv("LGOS_POSTGRES_URI", "postgresql://x")
    clean_env.setenv("LGOS_REDIS_URL", "redis://x")
    expected = "lgos: --reload serves one process: drop --workers (or LGOS_WORKERS)\n"
    assert refusal(["serve", TARGET, "--workers", "2", "--reload"], capsys) == expected
    clean_env.setenv("LGOS_WORKERS", "3")
    clean_env.setenv("LGOS_RELOAD", "true")
    assert refusal(["serve", TARGET], capsys) == expected


def test_background_graphs_need_the_distributed_engine() -> None:
    settings = LGOSSettings(workers=2, **SHARED)
    with pytest.raises(WorkersError, match=r"background graphs \(interruptible-approval, \.\.\.\)"):
        check_background(settings, graphs.create_registry())
    check_background(settings, process_registry())  # no background graph: fine
    distributed = LGOSSettings(workers=2, background="distributed", **SHARED)
    check_background(distributed, graphs.create_registry())
    check_background(LGOSSettings(), graphs.create_registry())  # one process: its own jobs


def test_the_server_processes_get_what_the_command_line_said(tmp_path: Path) -> None:
    settings = LGOSSettings(workers=3, registry=("a:b", "c:d"), app_dir=tmp_path, **SHARED)
    assert worker_environment(settings) == {
        "LGOS_REGISTRY": "a:b,c:d",
        "LGOS_WORKERS": "3",
        "LGOS_APP_DIR": str(tmp_path.resolve()),
    }


def test_the_background_worker_binds_its_health_port_where_told(
    clean_env: pytest.MonkeyPatch,
) -> None:
    # compose's Prometheus scrapes the worker from another container: --host 0.0.0.0 there.
    seen: list[tuple[str, int | None]] = []

    async def fake_run_worker(registry: object, settings: LGOSSettings, port: int | None) -> None:
        seen.append((settings.host, port))

    clean_env.setattr(lgos.cli, "run_worker", fake_run_worker)
    clean_env.setattr(lgos.cli, "registry_or_exit", lambda settings: object())
    clean_env.setenv("LGOS_POSTGRES_URI", "postgresql://x")
    clean_env.setenv("LGOS_REDIS_URL", "redis://x")
    main(["worker", "--host", "0.0.0.0", "--port", "3011"])
    main(["worker", "--port", "3011"])
    assert seen == [("0.0.0.0", 3011), ("127.0.0.1", 3011)]
