"""The Makefile's install steps (``scripts/install.py``): Debian packages, pinned venvs, the
workspace sync, npm packages.

Each step writes the tool's whole output to ``<state folder>/install/<name>.log`` and, when it
fails, ends with one line naming the cause and the fix (raised as ``SystemExit``), never the raw
output or a traceback. No step marks itself done: the Makefile touches a stamp only after the
step succeeded, so the next ``make`` installs a half-installed venv again.

Standard library only: these steps run before any virtual environment exists.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from lgos_stack.paths import state_dir

Say = Callable[[str], None]
CHECK = "check network and disk (df -h)"
LOW_DISK_MIB = 100
APT_NEEDS_ROOT = re.compile(r"Permission denied|are you root", re.IGNORECASE)
NOISE = re.compile(r"complete log of this run|^npm error\s*$|behind a proxy|'proxy' config")


def shown(path: Path) -> str:
    """A path as a person types it: relative to the current folder when inside it."""
    absolute = path.absolute()
    try:
        return str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)


def free_mib(folder: Path) -> int:
    """Free space where ``folder`` is (or would be created), in MiB."""
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return shutil.disk_usage(folder).free // 2**20


def log_path(name: str) -> Path:
    return state_dir() / "install" / f"{name}.log"


def reason(tool: str, output: str) -> str:
    """The tool's most telling error line (the fallback: its last line)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("$ ") and not NOISE.search(line)]
    if tool == "uv":
        # uv says what failed, then a chain of causes: the last one is the root cause.
        errors = [line for line in lines if line.startswith("error:")]
        causes = [line for line in lines if line.startswith(("cause:", "Caused by:"))]
        if errors:
            first = errors[-1].removeprefix("error:").strip()
            root = causes[-1].split(":", 1)[1].strip() if causes else ""
            return f"{first}: {root}" if root else first
    if tool == "apt-get":
        errors = [line.removeprefix("E:").strip() for line in lines if line.startswith("E:")]
        if errors:
            return errors[0]
    prefixed = re.compile(r"^(?:ERROR:|Error:|error:|npm error|npm ERR!)\s*(.*)$")
    found = [m.group(1) for line in lines if (m := prefixed.match(line)) and m.group(1)]
    if found:
        # npm spreads one error over lines; the one with the reason names it best.
        explained = [line for line in found if "reason:" in line or "No space" in line]
        return (explained or found)[-1]
    return lines[-1] if lines else "no output"


def run_logged(command: Sequence[str], log: Path, cwd: Path | None = None) -> int:
    """Run ``command`` with its output appended to ``log``; its exit status."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as out:
        out.write(f"$ {shlex.join(command)}\n")
        out.flush()
        try:
            return subprocess.run(
                command, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, check=False
            ).returncode
        except FileNotFoundError:
            raise SystemExit(
                f"{Path(command[0]).name} is not installed: install it "
                f"(e.g. `sudo apt-get install {Path(command[0]).name}`) and run make again"
            ) from None


def step(name: str, into: Path, commands: Sequence[Sequence[str]], cwd: Path | None = None) -> None:
    """Run each command of one install step; the first failure ends it with one line."""
    log = log_path(name)
    log.unlink(missing_ok=True)
    for command in commands:
        status = run_logged(command, log, cwd)
        if status == 0:
            continue
        output = log.read_text(errors="replace")
        # `python -m pip` is pip, `python -m venv` is venv.
        tool = command[2] if command[1:2] == ["-m"] else Path(command[0]).name
        if "ensurepip is not available" in output:
            raise SystemExit(
                f"installing {name} into {shown(into)} failed: Python's venv module has no "
                "ensurepip here; install it (e.g. `sudo apt-get install python3-venv`) "
                "and run make again"
            )
        free = free_mib(into)
        # A full disk makes tools fail with anything but the reason (venv hides ensurepip's).
        why, fix = (
            (f"disk full: {free} MiB free", "free some disk space (df -h)")
            if free < LOW_DISK_MIB
            else (reason(tool, output), CHECK)
        )
        raise SystemExit(
            f"installing {name} into {shown(into)} failed ({tool} exit {status}: {why}); "
            f"full output: {shown(log)}; {fix}"
        )


def pip(venv: Path, requirements: Sequence[str], say: Say, name: str | None = None) -> None:
    """``pip install`` into ``venv``, created first when it has no pip (a half-made one too)."""
    name = name or venv.name
    say(f"installing {name} into {shown(venv)} (log: {shown(log_path(name))})")
    create = [sys.executable, "-m", "venv", str(venv)]
    commands = [] if (venv / "bin" / "pip").exists() else [create]
    python = str(venv / "bin" / "python")
    commands.append([python, "-m", "pip", "install", "--disable-pip-version-check", *requirements])
    step(name, venv, commands)


def run(name: str, into: Path, command: Sequence[str], say: Say, cwd: Path | None = None) -> None:
    """One install command (``uv sync``, ``npm ci``) with its output logged."""
    say(f"installing {name} into {shown(into)} (log: {shown(log_path(name))})")
    step(name, into, [command], cwd)


def apt(package: str, command: str, goal: str, say: Say) -> None:
    """``apt-get install package`` unless ``command`` is already on PATH."""
    if shutil.which(command):
        return
    log = log_path(package)
    say(f"installing {package} with apt-get (log: {shown(log)})")
    log.unlink(missing_ok=True)
    for args in (["update", "-qq"], ["install", "-y", "-qq", package]):
        status = run_logged(["apt-get", *args], log)
        if status == 0:
            continue
        output = log.read_text(errors="replace")
        if APT_NEEDS_ROOT.search(output):
            again = f"sudo make {goal}".strip()
            raise SystemExit(
                f"installing {package} needs root: run `sudo apt-get install {package}`, "
                f"or `{again}`"
            )
        free = free_mib(Path("/var/cache/apt/archives"))
        why, fix = (
            (f"disk full: {free} MiB free", "free some disk space (df -h)")
            if free < LOW_DISK_MIB
            else (reason("apt-get", output), CHECK)
        )
        raise SystemExit(
            f"installing {package} with apt-get failed (apt-get exit {status}: {why}); "
            f"full output: {shown(log)}; {fix}"
        )


def npm_file(spec: str, member: str, target: Path, say: Say) -> None:
    """One file of an npm package (``npm pack``: the package alone, none of its dependencies)."""
    name = spec.rsplit("@", 1)[0]
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as folder:
        command = ["npm", "pack", "--loglevel=error", f"--pack-destination={folder}", spec]
        run(name, target.parent, command, say)
        try:
            (packed,) = Path(folder).glob("*.tgz")
            with tarfile.open(packed) as archive:
                source = archive.extractfile(f"package/{member}")
                if source is None:
                    raise OSError(f"{spec} has no {member}")
                partial = Path(folder) / target.name
                partial.write_bytes(source.read())
            os.replace(partial, target)
        except (OSError, ValueError, tarfile.TarError) as error:
            raise SystemExit(
                f"installing {name} into {shown(target.parent)} failed ({error}); {CHECK}"
            ) from None
