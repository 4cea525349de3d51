"""The bind options every service CLI shares: named for the service's settings, given only
when set (a setting from the environment otherwise stands)."""

from __future__ import annotations

import argparse

import pytest
from service_kit.serve import add_bind_options, bind_overrides


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="svc")
    add_bind_options(parser, env_prefix="SVC_", port=3999)
    return parser


def test_only_the_given_options_override_the_settings() -> None:
    assert bind_overrides(parser().parse_args([])) == {}
    assert bind_overrides(parser().parse_args(["--port", "4000"])) == {"port": 4000}
    given = parser().parse_args(["--host", "0.0.0.0", "--port", "1"])
    assert bind_overrides(given) == {"host": "0.0.0.0", "port": 1}


def test_the_help_names_the_settings(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parser().parse_args(["--help"])
    text = capsys.readouterr().out
    assert "SVC_HOST, default 127.0.0.1" in text and "SVC_PORT, default 3999" in text


def test_a_port_must_be_a_number(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parser().parse_args(["--port", "http"])
    assert "invalid int value" in capsys.readouterr().err
