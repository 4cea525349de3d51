"""Local base images, for an engine that reaches no image registry.

``lgos-local/debian:bookworm`` is made by debootstrap (minbase) from the Debian mirror the
machine's apt already uses, read from its apt sources at run time, and imported; the machine's own
certificate authorities go into its trust store, so pip, uv and apt inside reach what the host
reaches. ``lgos-local/python:3.11`` adds Debian bookworm's Python (3.11) and pip on top: the
Dockerfiles take it as their ``PYTHON_IMAGE`` build argument. Stand-ins for third-party images
(``STANDINS``) are built on these bases from the same pinned versions, out of Debian and PyPI.
Each image is built once and kept.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from lgos_stack.containers.engine import DOCKER_CLI, SYSTEM_PATH, Engine, EngineError, Say, docker
from lgos_stack.paths import ROOT

DEBIAN_IMAGE = "lgos-local/debian:bookworm"
PYTHON_IMAGE = "lgos-local/python:3.11"


@dataclass(frozen=True)
class Standin:
    """A local image standing in for a public one, built from ``scripts/dev-stack/images/<folder>``.

    ``repository``: the build context is the repository root (the Dockerfile copies pinned
    requirements from it). ``requirements``: a requirements file copied into the context as
    ``requirements.txt``; ``host_wheels`` names the packages in it that the host's pip downloads
    into the context's ``wheels/`` first (its configuration may know a build PyPI lacks, such as
    torch for CPU only).
    """

    tag: str
    folder: str
    repository: bool = False
    requirements: str | None = None
    host_wheels: tuple[str, ...] = ()


STANDINS = {
    "postgres": Standin("lgos-local/pgvector:pg18", "postgres"),
    "redis": Standin("lgos-local/redis:7.4-alpine", "redis"),
    "litellm": Standin("lgos-local/litellm:main-v1.108.7", "litellm", repository=True),
    "mcp-db": Standin("lgos-local/node:20.20-alpine", "node"),
    "open-webui": Standin(
        "lgos-local/open-webui:v0.12.4",
        "open-webui",
        requirements="ui/open-webui/requirements.txt",
        host_wheels=("torch",),
    ),
    "phoenix": Standin(
        "lgos-local/phoenix:version-20.26.1",
        "phoenix",
        requirements="services/phoenix/requirements.txt",
    ),
    "prometheus": Standin("lgos-local/prometheus:v2.42.0", "prometheus"),
}
"""compose.yaml's third-party images with a local stand-in, by the service that runs them (for
Open WebUI, the base its Dockerfile starts from); each keeps the public tag's version in its own."""
SUITE = "bookworm"
"""Debian 12, whose python3 is 3.11 (the Python the public base images carry)."""
IMAGES_DIR = ROOT / "scripts" / "dev-stack" / "images"
APT = Path("/etc/apt")
HOST_AUTHORITIES = Path("/usr/local/share/ca-certificates")


def sources_entries(apt: Path = APT) -> Iterator[tuple[list[str], list[str], list[str]]]:
    """(URIs, suites, components) of every enabled ``deb`` entry, one-line and deb822 alike."""
    lists = [apt / "sources.list", *sorted((apt / "sources.list.d").glob("*.list"))]
    for path in lists:
        if not path.is_file():
            continue
        for line in path.read_text().splitlines():
            words = re.sub(r"\[[^\]]*\]", "", line.split("#", 1)[0]).split()
            if len(words) >= 3 and words[0] == "deb":
                yield [words[1]], [words[2]], words[3:]
    for path in sorted((apt / "sources.list.d").glob("*.sources")):
        for stanza in re.split(r"\n\s*\n", path.read_text()):
            fields: dict[str, str] = {}
            for line in stanza.splitlines():
                if line.startswith("#") or ":" not in line or line[0].isspace():
                    continue
                key, value = line.split(":", 1)
                fields[key.strip().lower()] = value.strip()
            if "deb" in fields.get("types", "").split() and fields.get("enabled", "yes") != "no":
                yield (
                    fields.get("uris", "").split(),
                    fields.get("suites", "").split(),
                    fields.get("components", "").split(),
                )


def debian_mirror(apt: Path = APT) -> str:
    """The Debian archive the machine's apt uses: the first entry with ``main`` for bookworm,
    else the first Debian archive (a path ending in ``/debian``) of another release."""
    entries = [(u, s, c) for u, s, c in sources_entries(apt) if u and "main" in c]
    for uris, suites, _ in entries:
        if SUITE in suites:
            return uris[0]
    for uris, suites, _ in entries:
        release = any(re.fullmatch("[a-z]+", suite) for suite in suites)
        if release and uris[0].rstrip("/").endswith("/debian"):
            return uris[0]
    raise EngineError(f"no Debian archive with 'main' in the apt sources under {apt}")


def image_exists(engine: Engine, name: str) -> bool:
    return docker(engine, "image", "inspect", name, check=False).returncode == 0


def debian_base(engine: Engine, say: Say) -> None:
    """debootstrap minbase into a scratch folder, add the host's authorities, import it."""
    if image_exists(engine, DEBIAN_IMAGE):
        return
    mirror = debian_mirror()
    scratch = Path(tempfile.mkdtemp(prefix="rootfs-", dir=engine.root))
    rootfs = scratch / "rootfs"
    try:
        say(f"debootstrap {SUITE} (minbase) from the machine's apt mirror")
        subprocess.run(
            [
                "nice",
                "-n",
                "10",
                "debootstrap",
                "--variant=minbase",
                "--include=ca-certificates",
                SUITE,
                str(rootfs),
                mirror,
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"},
        )
        for archive in (rootfs / "var" / "cache" / "apt" / "archives").glob("*.deb"):
            archive.unlink()
        authorities = sorted(HOST_AUTHORITIES.rglob("*.crt")) if HOST_AUTHORITIES.is_dir() else []
        if authorities:
            target = rootfs / "usr" / "local" / "share" / "ca-certificates"
            for authority in authorities:
                shutil.copy2(authority, target / authority.name)
            subprocess.run(
                ["chroot", str(rootfs), "update-ca-certificates"],
                check=True,
                capture_output=True,
                env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
            )
        say(f"importing {DEBIAN_IMAGE}")
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
        imported = subprocess.run(
            [DOCKER_CLI, "import", "--change", 'CMD ["bash"]', "-", DEBIAN_IMAGE],
            stdin=tar.stdout,
            env=engine.env(),
            capture_output=True,
            text=True,
        )
        if tar.stdout is not None:
            tar.stdout.close()
        if tar.wait() != 0 or imported.returncode != 0:
            raise EngineError(f"importing the Debian root failed: {imported.stderr.strip()}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def python_base(engine: Engine, say: Say) -> None:
    """Debian bookworm's Python 3.11 and pip on the Debian base."""
    if image_exists(engine, PYTHON_IMAGE):
        return
    say(f"building {PYTHON_IMAGE}")
    build(engine, IMAGES_DIR / "python", PYTHON_IMAGE, {"DEBIAN_IMAGE": DEBIAN_IMAGE})


def standin(engine: Engine, say: Say, service: str) -> str:
    """The local stand-in for ``service``'s public image, built once; its tag."""
    spec = STANDINS[service]
    if image_exists(engine, spec.tag):
        return spec.tag
    say(f"building {spec.tag}")
    args = {"DEBIAN_IMAGE": DEBIAN_IMAGE, "PYTHON_IMAGE": PYTHON_IMAGE}
    folder = IMAGES_DIR / spec.folder
    if spec.repository:
        build(engine, ROOT, spec.tag, args, dockerfile=folder / "Dockerfile")
    elif spec.requirements is None:
        build(engine, folder, spec.tag, args)
    else:
        scratch = Path(tempfile.mkdtemp(prefix="context-", dir=engine.root))
        try:
            context = scratch / spec.folder
            shutil.copytree(folder, context)
            shutil.copy2(ROOT / spec.requirements, context / "requirements.txt")
            host_wheels(context / "requirements.txt", spec.host_wheels, context / "wheels", say)
            build(engine, context, spec.tag, args)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return spec.tag


def pins(requirements: Path, names: tuple[str, ...]) -> list[str]:
    """The lines of ``requirements`` that pin one of ``names``."""
    return [
        line.strip()
        for line in requirements.read_text().splitlines()
        if re.split(r"[=<>\[ ]", line.strip(), maxsplit=1)[0].lower() in names
    ]


def host_wheels(requirements: Path, names: tuple[str, ...], target: Path, say: Say) -> None:
    """The pinned ``names`` from ``requirements``, downloaded by the host's pip with its own
    configuration; ``target`` exists afterwards even when none could be downloaded."""
    target.mkdir(parents=True, exist_ok=True)
    wanted = pins(requirements, names)
    pip = shutil.which("pip3", path=SYSTEM_PATH)
    if not wanted or pip is None:
        return
    say(f"downloading {', '.join(wanted)} with the host's pip")
    download = [pip, "download", "--no-deps", "--only-binary=:all:", "--dest", str(target)]
    result = subprocess.run(
        ["nice", "-n", "10", *download, *wanted], capture_output=True, text=True
    )
    if result.returncode != 0:
        say(f"the host's pip could not download {', '.join(wanted)}: the image's pip will")


def build(
    engine: Engine,
    context: Path,
    tag: str,
    args: dict[str, str],
    *,
    dockerfile: Path | None = None,
    target: str | None = None,
) -> None:
    """``docker build`` (BuildKit, under nice) of ``context``; EngineError with its last lines."""
    command = ["build", "--tag", tag]
    for key, value in args.items():
        command += ["--build-arg", f"{key}={value}"]
    if dockerfile is not None:
        command += ["--file", str(dockerfile)]
    if target is not None:
        command += ["--target", target]
    result = subprocess.run(
        ["nice", "-n", "10", DOCKER_CLI, *command, str(context)],
        env=engine.env(),
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        tail = (result.stdout + result.stderr).strip().splitlines()[-30:]
        raise EngineError(f"building {tag} failed:\n" + "\n".join(tail))


def ensure(engine: Engine, say: Say) -> None:
    """Both local bases, each built only when missing."""
    debian_base(engine, say)
    python_base(engine, say)
