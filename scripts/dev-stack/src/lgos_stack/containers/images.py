"""The images compose.yaml builds from this repository, built against a chosen Python base.

What to build (Dockerfile, target, tag) and how each service runs (user, read-only root,
capabilities, tmpfs) are read from compose.yaml itself, so a container started from here is
hardened exactly as the compose stack would harden it.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

import yaml

from lgos_stack.containers.bases import PYTHON_IMAGE, STANDINS, build
from lgos_stack.containers.engine import Engine, Say
from lgos_stack.paths import ROOT

COMPOSE = ROOT / "compose.yaml"
PYTHON_BASED = ("lgos", "offline-model", "files", "gateway-jobs-image", "searxng", "chainlit")
"""The services whose image builds FROM the Python base (Open WebUI's starts from its own)."""
ON_STANDIN = {"open-webui": ("OPEN_WEBUI_IMAGE", "open-webui")}
"""The services whose image builds FROM a third-party image: the build argument naming it and the
local stand-in (``bases.STANDINS``) it takes here."""


def services() -> dict[str, dict[str, Any]]:
    data = yaml.safe_load(COMPOSE.read_text())
    found: dict[str, dict[str, Any]] = data["services"]
    return found


@dataclass(frozen=True)
class Image:
    service: str
    dockerfile: str
    target: str | None
    tag: str

    @classmethod
    def of(cls, service: str) -> Image:
        spec = services()[service]
        built = spec["build"]
        return cls(service, built["dockerfile"], built.get("target"), spec["image"])

    def build(self, engine: Engine, python_image: str = PYTHON_IMAGE) -> None:
        args = {"PYTHON_IMAGE": python_image}
        if self.service in ON_STANDIN:
            arg, standin = ON_STANDIN[self.service]
            args = {arg: STANDINS[standin].tag}
        build(
            engine,
            ROOT,
            self.tag,
            args,
            dockerfile=ROOT / self.dockerfile,
            target=self.target,
        )


def build_all(engine: Engine, say: Say, names: tuple[str, ...] = PYTHON_BASED) -> list[Image]:
    """Build the named services' images (the engine's layer cache keeps unchanged steps)."""
    built = []
    for name in names:
        image = Image.of(name)
        stage = f", target {image.target}" if image.target else ""
        say(f"building {image.tag} ({image.dockerfile}{stage})")
        image.build(engine)
        built.append(image)
    return built


def run_options(service: str) -> list[str]:
    """``docker run`` options for the hardening compose.yaml gives ``service``: user, read-only
    root, dropped capabilities, security options, tmpfs mounts, the memory limit; and its
    healthcheck."""
    spec = services()[service]
    options = []
    if "user" in spec:
        options += ["--user", str(spec["user"])]
    if spec.get("read_only"):
        options.append("--read-only")
    for capability in spec.get("cap_drop", []):
        options += ["--cap-drop", capability]
    for option in spec.get("security_opt", []):
        options += ["--security-opt", option]
    for mount in spec.get("tmpfs", []):
        options += ["--tmpfs", str(mount)]
    if "mem_limit" in spec:
        options += ["--memory", str(spec["mem_limit"])]
    return options + health_options(spec.get("healthcheck"))


def health_options(check: dict[str, Any] | None) -> list[str]:
    """compose's healthcheck as ``docker run`` options (the image's own one when absent)."""
    if not check:
        return []
    test = check["test"]
    if isinstance(test, list):
        command = test[1] if test[0] == "CMD-SHELL" else shlex.join(test[1:])
    else:
        command = str(test)
    options = ["--health-cmd", command]
    for key in ("interval", "timeout", "retries", "start_period"):
        if key in check:
            options += [f"--health-{key.replace('_', '-')}", str(check[key])]
    return options
