"""One JSON object a line: ts, level, logger, event, then the extra fields, then the exception."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest
from service_kit.logs import configure_logging


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    loggers = [logging.getLogger(), logging.getLogger("kit_test")]
    saved = [(lg, lg.handlers[:], lg.level, lg.propagate) for lg in loggers]
    yield
    for logger, handlers, level, propagate in saved:
        logger.handlers[:] = handlers
        logger.setLevel(level)
        logger.propagate = propagate


def lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines()]


def test_a_line_has_the_fixed_fields_then_extras_then_the_exception(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging("info")
    logger = logging.getLogger("kit_test.app")
    logger.debug("not at info")
    logger.info("served", extra={"port": 3004, "models": ["a"], "path": object()})
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logger.exception("failed")
    first, second = lines(capsys.readouterr().err)
    assert list(first)[:4] == ["ts", "level", "logger", "event"]
    assert first["level"] == "info" and first["logger"] == "kit_test.app"
    assert first["event"] == "served"
    assert first["port"] == 3004 and first["models"] == ["a"]
    assert str(first["path"]).startswith("<object object")  # not JSON: written as str()
    assert "exception" not in first
    assert second["level"] == "error" and second["event"] == "failed"
    assert list(second)[-1] == "exception"
    assert "RuntimeError: boom" in str(second["exception"])


def test_a_named_logger_keeps_its_lines_and_leaves_the_root_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    root_handlers = logging.getLogger().handlers[:]
    configure_logging("warning", "kit_test")
    logger = logging.getLogger("kit_test.part")
    logger.info("below the level")
    logger.warning("kept", extra={"raced": True})
    logging.getLogger("elsewhere").warning("not ours")
    captured = capsys.readouterr().err
    ours = [line for line in lines_from(captured) if line.get("logger") == "kit_test.part"]
    assert ours == [
        {**ours[0], "level": "warning", "logger": "kit_test.part", "event": "kept", "raced": True}
    ]
    assert logging.getLogger("kit_test").propagate is False
    assert logging.getLogger().handlers == root_handlers


def lines_from(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]
