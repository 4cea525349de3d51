"""The Chainlit app's own loggers write service_kit's JSON lines, a message's with its request id;
Chainlit's loggers stay as Chainlit set them. (The app module needs Chainlit's venv; its
logging wiring and settings do not.)"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from service_kit import context

CHAINLIT = Path(__file__).resolve().parents[2] / "ui" / "chainlit"


@pytest.fixture
def app_modules(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[ModuleType, ModuleType]]:
    """lgos_chainlit's logs and config, imported as `chainlit run` does (its folder on the
    path); the loggers they shape are restored afterwards."""
    monkeypatch.syspath_prepend(str(CHAINLIT))
    from lgos_chainlit import config, logs

    loggers = [logging.getLogger(name) for name in (*logs.LOGGERS, "chainlit")]
    saved = [(lg, lg.handlers[:], lg.level, lg.propagate) for lg in loggers]
    yield logs, config
    for logger, handlers, level, propagate in saved:
        logger.handlers[:] = handlers
        logger.setLevel(level)
        logger.propagate = propagate


def test_our_loggers_write_json_lines_with_the_bound_request_id(
    app_modules: tuple[ModuleType, ModuleType], capsys: pytest.CaptureFixture[str]
) -> None:
    logs, _ = app_modules
    chainlit_handlers = logging.getLogger("chainlit").handlers[:]
    logs.configure("info")
    with context.bound(request_id="req_chainlit-1"):
        logging.getLogger("lgos_chainlit").warning("upload failed", extra={"error": "APIError"})
        logging.getLogger("lgos_ui").info("response", extra={"status": "completed"})
        logging.getLogger("lgos_ui").debug("below the level")
    logging.getLogger("lgos_chainlit").info("outside a message")
    err = capsys.readouterr().err
    lines = [json.loads(line) for line in err.splitlines() if line.startswith('{"ts"')]
    assert [(r["logger"], r["level"], r["event"]) for r in lines] == [
        ("lgos_chainlit", "warning", "upload failed"),
        ("lgos_ui", "info", "response"),
        ("lgos_chainlit", "info", "outside a message"),
    ]
    assert all(list(r)[:4] == ["ts", "level", "logger", "event"] for r in lines)
    assert [r.get("request_id") for r in lines] == ["req_chainlit-1", "req_chainlit-1", None]
    assert logging.getLogger("chainlit").handlers == chainlit_handlers


def test_the_level_is_a_setting_and_a_wrong_one_stops_the_app(
    app_modules: tuple[ModuleType, ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, config = app_modules
    monkeypatch.delenv("CHAINLIT_LOG_LEVEL", raising=False)
    assert config.AppSettings.from_env().log_level == "info"
    monkeypatch.setenv("CHAINLIT_LOG_LEVEL", "WARNING")
    assert config.AppSettings.from_env().log_level == "warning"
    monkeypatch.setenv("CHAINLIT_LOG_LEVEL", "verbose")
    with pytest.raises(SystemExit, match="CHAINLIT_LOG_LEVEL must be one of"):
        config.AppSettings.from_env()
