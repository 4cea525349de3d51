"""The Makefile's install steps: ``python -m scripts.install apt|pip|run|npm-file ...`` installs
Debian packages, pinned venvs, the workspace (``uv sync``) and npm packages.

Each step writes its tool's whole output to ``.dev/install/<name>.log`` (``--logs``) and, when it
fails, ends with one line naming the cause and the fix, never the raw output or a traceback. No
step marks itself done: the Makefile touches a stamp only after the step succeeded, so the next
``make`` installs a half-installed venv again.

Standard library only: it runs before any virtual environment exists (it creates them).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

CHECK = "check network and disk (df -h)"
LOW_DISK_MIB = 100
APT_NEEDS_ROOT = re.compile(r"Permission denied|are you root", re.IGNORECASE)
NOISE = re.compile(r"complete log of this run|^npm error\s*$|behind a proxy|'proxy' config")
ERROR = re.compile(r"^(?:ERROR:|Error:|error:|npm error|npm ERR!)\s*(.*)$")


def shown(path: Path) -> str:
    """A path as a person types it: relative to the current folder when inside it."""
    absolute = path.absolute()
    try:
        return str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)


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
    found = [m.group(1) for line in lines if (m := ERROR.match(line)) and m.group(1)]
    if found:
        # npm spreads one error over lines; the one with the reason names it best.
        explained = [line for line in found if "reason:" in line or "No space" in line]
        return (explained or found)[-1]
    return lines[-1] if lines else "no output"


def cause(tool: str, output: str, where: Path) -> tuple[str, str]:
    """Why a step failed and the fix. A full disk makes tools fail with anything but that
    reason (venv even hides ensurepip's output), so free space is checked first."""
    while not where.exists() and where != where.parent:
        where = where.parent
    free = shutil.disk_usage(where).free // 2**20
    if free < LOW_DISK_MIB:
        return f"disk full: {free} MiB free", "free some disk space (df -h)"
    return reason(tool, output), CHECK


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


APT_LOCK = Path(tempfile.gettempdir()) / "lgos-apt-get.lock"
"""One apt-get at a time on this machine: make runs install steps side by side, and dpkg's own
lock makes a second apt-get fail instead of waiting."""


@contextlib.contextmanager
def apt_turn() -> Iterator[None]:
    # Read-only: any user can open it (a lock need not be writable); the user without root
    # still reaches apt-get and its own message.
    lock = os.open(APT_LOCK, os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
    finally:
        os.close(lock)


def pinned(requirements: Path, names: Sequence[str]) -> list[str]:
    """The requirement lines of ``requirements`` that pin one of ``names`` (``name==version``);
    a name without such a line is an error, so a pin cannot silently go unused."""
    lines = [line.split("#")[0].strip() for line in requirements.read_text().splitlines()]
    found = []
    for name in names:
        pins = [line for line in lines if re.fullmatch(rf"{re.escape(name)}==\S+", line, re.I)]
        if len(pins) != 1:
            raise SystemExit(f"{requirements} pins {name} {len(pins)} times (one `{name}==` line)")
        found.append(pins[0])
    return found


def venv_commands(venv: Path) -> tuple[list[list[str]], str]:
    """The command creating ``venv`` when it has no pip (a half-made one too), and its Python."""
    create = [sys.executable, "-m", "venv", str(venv)]
    return ([] if (venv / "bin" / "pip").exists() else [create]), str(venv / "bin" / "python")


@dataclass(frozen=True)
class Installer:
    logs: Path
    """Each step's log folder (the Makefile's: the stack's state folder's ``install/``)."""
    goal: str
    """The make goals, named in the hint to run them as root."""

    def log(self, name: str) -> Path:
        return self.logs / f"{name}.log"

    def step(
        self, name: str, into: Path, commands: Sequence[Sequence[str]], cwd: Path | None = None
    ) -> None:
        """Run each command of one install step; the first failure ends it with one line."""
        log = self.log(name)
        print(f"installing {name} into {shown(into)} (log: {shown(log)})", flush=True)
        log.unlink(missing_ok=True)
        for command in commands:
            status = run_logged(command, log, cwd)
            if status == 0:
                continue
            output = log.read_text(errors="replace")
            if "ensurepip is not available" in output:
                raise SystemExit(
                    f"installing {name} into {shown(into)} failed: Python's venv module has no "
                    "ensurepip here; install it (e.g. `sudo apt-get install python3-venv`) "
                    "and run make again"
                )
            # `python -m pip` is pip, `python -m venv` is venv.
            tool = command[2] if command[1:2] == ["-m"] else Path(command[0]).name
            why, fix = cause(tool, output, into)
            raise SystemExit(
                f"installing {name} into {shown(into)} failed ({tool} exit {status}: {why}); "
                f"full output: {shown(log)}; {fix}"
            )

    def pip(self, venv: Path, requirements: Sequence[str], name: str | None = None) -> None:
        """``pip install`` into ``venv``, created first when it has no pip (a half-made one too)."""
        commands, python = venv_commands(venv)
        commands.append(
            [python, "-m", "pip", "install", "--disable-pip-version-check", *requirements]
        )
        self.step(name or venv.name, venv, commands)

    def uv_pip(
        self,
        venv: Path,
        requirements: Path,
        uv: Path,
        pip_first: Sequence[str] = (),
        name: str | None = None,
    ) -> None:
        """``uv pip install -r requirements`` into ``venv`` (created first as :meth:`pip` does):
        minutes faster than pip for a large pinned set, downloads side by side. The packages
        named in ``pip_first`` are installed by pip before, at their pinned versions: pip reads
        the machine's configuration (here, a local CPU wheel of torch), which uv ignores; uv
        then keeps what satisfies the pins."""
        commands, python = venv_commands(venv)
        first = pinned(requirements, pip_first)
        if first:
            commands.append([python, "-m", "pip", "install", "--disable-pip-version-check", *first])
        install = [str(uv), "pip", "install", "--python", python, "--compile-bytecode"]
        commands.append([*install, "-r", str(requirements)])
        self.step(name or venv.name, venv, commands)

    def apt(self, package: str, command: str, recommends: bool = True) -> None:
        """``apt-get install package`` unless ``command`` is already on PATH; without the
        package's recommendations when ``recommends`` is off."""
        if shutil.which(command):
            return
        with apt_turn():
            if not shutil.which(command):  # another step may have installed it meanwhile
                self._apt(package, recommends)

    def _apt(self, package: str, recommends: bool) -> None:
        log = self.log(package)
        print(f"installing {package} with apt-get (log: {shown(log)})", flush=True)
        log.unlink(missing_ok=True)
        install = ["install", "-y", "-qq", *([] if recommends else ["--no-install-recommends"])]
        for args in (["update", "-qq"], [*install, package]):
            status = run_logged(["apt-get", *args], log)
            if status == 0:
                continue
            output = log.read_text(errors="replace")
            if APT_NEEDS_ROOT.search(output):
                again = f"sudo make {self.goal}".strip()
                raise SystemExit(
                    f"installing {package} needs root: run `sudo apt-get install {package}`, "
                    f"or `{again}`"
                )
            why, fix = cause("apt-get", output, Path("/var/cache/apt/archives"))
            raise SystemExit(
                f"installing {package} with apt-get failed (apt-get exit {status}: {why}); "
                f"full output: {shown(log)}; {fix}"
            )

    def npm_file(self, spec: str, member: str, target: Path) -> None:
        """One file of an npm package (``npm pack`` fetches the package alone, no dependencies)."""
        name = spec.rsplit("@", 1)[0]
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent) as folder:
            command = ["npm", "pack", "--loglevel=error", f"--pack-destination={folder}", spec]
            self.step(name, target.parent, [command])
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--goal", default="", help="the make goals, named in the root hint")
    parser.add_argument("--logs", type=Path, default=Path(".dev/install"), help="log folder")
    commands = parser.add_subparsers(dest="command", required=True)
    apt = commands.add_parser("apt", help="apt-get install PACKAGE unless COMMAND is on PATH")
    apt.add_argument("package")
    apt.add_argument("--command", dest="program", help="the program it provides (default: PACKAGE)")
    apt.add_argument(
        "--no-recommends", action="store_true", help="leave out the package's recommendations"
    )
    pip = commands.add_parser("pip", help="pip install ARGS into VENV (created when missing)")
    pip.add_argument("--name", help="the step's name in messages and its log (default: VENV's)")
    pip.add_argument("venv", type=Path)
    pip.add_argument("args", nargs=argparse.REMAINDER)
    uv_pip = commands.add_parser(
        "uv-pip", help="uv pip install -r REQUIREMENTS into VENV (created when missing)"
    )
    uv_pip.add_argument("--name", help="the step's name in messages and its log (default: VENV's)")
    uv_pip.add_argument("--uv", type=Path, required=True, help="the uv binary")
    uv_pip.add_argument(
        "--pip-first", action="append", default=[], help="a package pip installs first, pinned"
    )
    uv_pip.add_argument("venv", type=Path)
    uv_pip.add_argument("requirements", type=Path)
    run = commands.add_parser("run", help="run one install command: NAME INTO -- COMMAND...")
    run.add_argument("--cwd", type=Path)
    run.add_argument("name")
    run.add_argument("into", type=Path)
    run.add_argument("args", nargs=argparse.REMAINDER)
    npm_file = commands.add_parser("npm-file", help="one file of an npm package: SPEC FILE TARGET")
    npm_file.add_argument("spec")
    npm_file.add_argument("member")
    npm_file.add_argument("target", type=Path)
    args = parser.parse_args()
    installer = Installer(args.logs, args.goal)
    try:
        if args.command == "apt":
            installer.apt(args.package, args.program or args.package, not args.no_recommends)
        elif args.command == "pip":
            installer.pip(args.venv, args.args, args.name)
        elif args.command == "uv-pip":
            installer.uv_pip(args.venv, args.requirements, args.uv, args.pip_first, args.name)
        elif args.command == "run":
            command = args.args[1:] if args.args[:1] == ["--"] else args.args
            installer.step(args.name, args.into, [command], args.cwd)
        else:
            installer.npm_file(args.spec, args.member, args.target)
    except KeyboardInterrupt:
        sys.exit("install interrupted: run make again to finish it")


if __name__ == "__main__":
    main()
