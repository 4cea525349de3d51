"""What the images are and how their containers run come from compose.yaml itself."""

from __future__ import annotations

import itertools

from lgos_stack.containers.images import PYTHON_BASED, Image, health_options, run_options
from lgos_stack.paths import ROOT


def test_images_are_compose_builds() -> None:
    lgos = Image.of("lgos")
    assert (lgos.dockerfile, lgos.target, lgos.tag) == (
        "Dockerfile",
        "lgos",
        "lgos-demo/lgos:local",
    )
    searxng = Image.of("searxng")
    assert (searxng.dockerfile, searxng.target) == ("services/searxng/Dockerfile", None)
    # Every image built on the Python base takes it as the PYTHON_IMAGE build argument.
    for name in PYTHON_BASED:
        assert "FROM ${PYTHON_IMAGE}" in (ROOT / Image.of(name).dockerfile).read_text(), name


def test_run_options_carry_compose_hardening() -> None:
    options = run_options("lgos")
    pairs = list(itertools.pairwise(options))
    assert ("--user", "10001:10001") in pairs
    assert "--read-only" in options
    assert ("--cap-drop", "ALL") in pairs
    assert ("--security-opt", "no-new-privileges:true") in pairs
    assert ("--tmpfs", "/tmp:size=64m") in pairs
    assert ("--memory", "512m") in pairs
    # A service with a writable root (LiteLLM's listed exception) is not made read-only.
    assert "--read-only" not in run_options("litellm")
    assert "--user" not in run_options("litellm")


def test_compose_healthchecks_become_run_options() -> None:
    options = run_options("postgres")  # the stand-in image has no HEALTHCHECK of its own
    pairs = dict(itertools.pairwise(options))
    assert pairs["--health-cmd"] == "pg_isready -U lgos -d lgos"
    assert (pairs["--health-interval"], pairs["--health-retries"]) == ("5s", "12")
    assert ("--tmpfs", "/var/run/postgresql:size=8m") in list(itertools.pairwise(options))
    assert (
        health_options({"test": ["CMD-SHELL", "curl -f x || exit 1"]})[1] == "curl -f x || exit 1"
    )
    assert health_options(None) == []
