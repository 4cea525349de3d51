"""Settings that cannot work are refused at start-up, with a message naming what is missing."""

from __future__ import annotations

import pytest
from lgos.cli import settings_from_env
from lgos.settings import LGOSSettings
from pydantic import ValidationError


def test_embedded_defaults_need_nothing() -> None:
    settings = LGOSSettings()
    assert settings.background == "inprocess"


def test_distributed_engine_needs_postgres_and_redis() -> None:
    with pytest.raises(ValidationError, match="LGOS_POSTGRES_URI and LGOS_REDIS_URL"):
        LGOSSettings(background="distributed", redis_url="redis://x")
    ok = LGOSSettings(
        background="distributed", redis_url="redis://x", postgres_uri="postgresql://x"
    )
    assert ok.background == "distributed"


def test_a_worker_must_heartbeat_well_within_the_stale_bound() -> None:
    with pytest.raises(ValidationError, match="must exceed two heartbeats"):
        LGOSSettings(worker_heartbeat=5, worker_stale_after=8)


def test_the_cli_reports_bad_settings_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LGOS_POSTGRES_URI", raising=False)
    monkeypatch.delenv("LGOS_REDIS_URL", raising=False)
    with pytest.raises(SystemExit) as exited:
        settings_from_env(background="distributed")
    assert str(exited.value) == (
        "lgos: invalid settings: LGOS_BACKGROUND=distributed needs LGOS_POSTGRES_URI and "
        "LGOS_REDIS_URL"
    )


def test_consumer_idle_is_positive() -> None:
    assert LGOSSettings().worker_consumer_idle == 3600.0
    with pytest.raises(ValidationError):
        LGOSSettings(worker_consumer_idle=0)


def test_gc_thresholds_parse_and_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    assert LGOSSettings().gc_thresholds == (700, 10, 1_000)
    monkeypatch.setenv("LGOS_GC_THRESHOLDS", " 700, 10,10 ")
    assert LGOSSettings().gc_thresholds == (700, 10, 10)
    monkeypatch.setenv("LGOS_GC_THRESHOLDS", "default")
    assert LGOSSettings().gc_thresholds is None
    for bad in ("0,10,10", "10000,5", "10000,5,1000,1", "a,b,c", "10000,0,1000"):
        monkeypatch.setenv("LGOS_GC_THRESHOLDS", bad)
        with pytest.raises(ValidationError):
            LGOSSettings()


def test_metrics_switch_is_a_validated_boolean(monkeypatch: pytest.MonkeyPatch) -> None:
    assert LGOSSettings().metrics_enabled is True
    monkeypatch.setenv("LGOS_METRICS_ENABLED", "false")
    assert LGOSSettings().metrics_enabled is False
    monkeypatch.setenv("LGOS_METRICS_ENABLED", "maybe")
    with pytest.raises(SystemExit) as exited:
        settings_from_env()
    assert str(exited.value).startswith("lgos: invalid settings: LGOS_METRICS_ENABLED: ")
