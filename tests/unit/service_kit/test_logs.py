"""One JSON object a line: ts, level, logger, event, then the extra fields, then the exception."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest
from service_kit import context
from service_kit.logs import URL_LOGGERS, configure_logging


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    loggers = [logging.getLogger(), logging.getLogger("kit_test"), logging.getLogger("kit_ui")]
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


def test_the_context_fields_come_after_the_fixed_ones_and_an_extra_wins(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging("info")
    logger = logging.getLogger("kit_test.context")
    with context.fresh(request_id="r-1", model="m", traceparent="00-x", status="queued"):
        logger.info("ran", extra={"status": "completed", "port": 1})
    logger.info("outside")
    inside, outside = lines(capsys.readouterr().err)
    fixed = ["ts", "level", "logger", "event"]
    assert list(inside) == [*fixed, "request_id", "model", "status", "port"]
    assert inside["status"] == "completed"  # the call's own value
    assert list(outside) == ["ts", "level", "logger", "event"]


def test_request_urls_stay_out_unless_debugging(capsys: pytest.CaptureFixture[str]) -> None:
    saved = {name: logging.getLogger(name).level for name in URL_LOGGERS}
    try:
        configure_logging("info")
        logging.getLogger("httpx").info("HTTP Request: GET /search?q=what+a+user+typed")
        assert capsys.readouterr().err == ""
        configure_logging("debug")
        logging.getLogger("httpx").info("HTTP Request: GET /search?q=debugging")
        assert "debugging" in capsys.readouterr().err
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


def test_a_plugin_in_another_process_leaves_its_url_loggers_alone() -> None:
    saved = {name: logging.getLogger(name).level for name in URL_LOGGERS}
    try:
        for name in URL_LOGGERS:
            logging.getLogger(name).setLevel(logging.INFO)
        configure_logging("info", "kit_test", quiet_urls=False)
        levels = [logging.getLogger(name).level for name in URL_LOGGERS]
        assert levels == [logging.INFO] * len(URL_LOGGERS)
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


# What the UIs' venvs lack: service_kit's logging must import and write the same line without.
WITHOUT = ("orjson", "opentelemetry", "fastapi", "starlette", "pydantic", "prometheus_client")
STDLIB_ONLY = f"""
import importlib.abc, logging, sys

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {WITHOUT!r}:
            raise ModuleNotFoundError(name)
        return None

sys.meta_path.insert(0, Refuse())
from service_kit import context
from service_kit.logs import configure_logging

configure_logging("info", "kit_ui")
with context.bound(request_id="req_ui-1", model="lgos/advanced-graph"):
    logging.getLogger("kit_ui.turn").info("réponse", extra={{"status": "completed", "n": 1.5}})
assert not any(m.split(".")[0] in {WITHOUT!r} for m in sys.modules), sorted(sys.modules)
"""


def test_logging_imports_and_writes_the_same_line_without_third_party_packages(
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", STDLIB_ONLY], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    [without] = done.stderr.splitlines()
    configure_logging("info", "kit_ui")
    with context.bound(request_id="req_ui-1", model="lgos/advanced-graph"):
        logging.getLogger("kit_ui.turn").info("réponse", extra={"status": "completed", "n": 1.5})
    [with_orjson] = capsys.readouterr().err.splitlines()
    ts = re.compile(r'"ts":"[^"]+"')
    assert ts.sub("", without) == ts.sub("", with_orjson)  # byte for byte, but the time
    assert json.loads(without)["event"] == "réponse" and "\\u" not in without
