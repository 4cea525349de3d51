"""How long the stack takes to come up: warm (everything installed) and, with ``--cold``, from
empty install folders and empty download caches.

Warm: ``scripts/devstack.py up --detach`` as ``make dev-up`` runs it, with both UIs, on free ports
and a private state folder, then ``down``. The first start in a new state folder also creates the
databases, Open WebUI's tables and the knowledge store; the starts after it keep that state, as a
developer's second ``make dev-up`` does. Each start prints every component's time to healthy
(they start side by side by what they need, ``lgos_stack.order``).

Cold (``--cold``): ``make stack-installs`` into an empty tools folder and an empty workspace
venv, with uv's, pip's and npm's caches pointed at empty folders too, so every package is
downloaded again, then one warm start. What a fresh machine's package manager installs
(Redis, Prometheus) is taken as present.

    python -m scripts.bench_startup                 # warm: first start + 2 restarts, ≈ 3 minutes
    python -m scripts.bench_startup --cold          # adds the cold install, ≈ 10 minutes
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from lgos_stack.bench.report import Check, print_checks
from lgos_stack.paths import ROOT
from lgos_stack.private import private_env

WARM_GOAL = 30.0
COLD_GOAL = 600.0
"""Seconds: a warm ``make dev-up`` with both UIs, and a cold one (installs included)."""
HEALTHY = re.compile(r"^(?P<name>\S+)\s+healthy on \S+ in (?P<took>[\d.]+)s$", re.MULTILINE)
DEVSTACK = [sys.executable, str(ROOT / "scripts" / "devstack.py")]


@dataclass(frozen=True)
class Start:
    seconds: float
    """From the command to its return (every component healthy and ready)."""
    components: dict[str, float]
    """Each component's seconds from its own start to healthy, as the runner prints them."""


def stack_env(state: Path, pg_data: Path) -> dict[str, str]:
    return private_env(state, pg_data, {"DEVSTACK_SKIP": ""})  # both UIs, as make dev-up


def start_once(env: dict[str, str]) -> Start:
    begun = time.monotonic()
    up = subprocess.run(
        [*DEVSTACK, "up", "--detach"], env=env, capture_output=True, text=True, timeout=900
    )
    seconds = time.monotonic() - begun
    try:
        if up.returncode != 0:
            raise SystemExit(f"devstack up failed:\n{up.stdout}{up.stderr}")
        components = {m["name"]: float(m["took"]) for m in HEALTHY.finditer(up.stdout)}
        return Start(seconds, components)
    finally:
        down = subprocess.run(
            [*DEVSTACK, "down"], env=env, capture_output=True, text=True, timeout=120
        )
        if down.returncode != 0:
            print(f"devstack down failed: {down.stderr}", file=sys.stderr)


def warm(restarts: int, scratch: Path) -> list[Start]:
    state, pg_data = scratch / "state", scratch / "pg" / "data"
    # PostgreSQL runs as its own user when started as root: it must reach its data folder.
    for folder in (scratch, pg_data.parent):
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o755)
    env = stack_env(state, pg_data)
    return [start_once(env) for _ in range(1 + restarts)]


def cold_install(scratch: Path) -> float:
    """``make stack-installs`` into empty folders with empty caches; its seconds."""
    tools, venv, caches = scratch / "tools", scratch / "venv", scratch / "caches"
    env = {
        **os.environ,
        "UV_CACHE_DIR": str(caches / "uv"),
        "PIP_CACHE_DIR": str(caches / "pip"),
        "npm_config_cache": str(caches / "npm"),
        "UV_PROJECT_ENVIRONMENT": str(venv),
    }
    command = [
        "make",
        "--no-print-directory",
        f"TOOLS={tools}",
        f"SYNCED={venv}/.synced",
        f"DEVSTACK_STATE_DIR={scratch / 'state'}",
        "stack-installs",
    ]
    begun = time.monotonic()
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - begun
    if result.returncode != 0:
        raise SystemExit(f"cold install failed:\n{result.stdout}{result.stderr}")
    return seconds


def report(starts: list[Start], cold_seconds: float | None) -> bool:
    names = sorted({name for start in starts for name in start.components})
    labels = ["first start", *(f"restart {n}" for n in range(1, len(starts)))]
    print("\n| component | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(starts))
    for name in names:
        cells = [f"{s.components[name]:.1f} s" if name in s.components else "-" for s in starts]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("| **whole `dev-up`** | " + " | ".join(f"{s.seconds:.1f} s" for s in starts) + " |")
    restarts = [s.seconds for s in starts[1:]] or [starts[0].seconds]
    best = min(restarts)
    which = "best restart" if len(starts) > 1 else "first start, no restart run"
    checks = [
        Check(
            f"warm `make dev-up`, both UIs ({which})",
            f"{best:.1f} s",
            f"≤ {WARM_GOAL:.0f} s",
            best <= WARM_GOAL,
        )
    ]
    if cold_seconds is not None:
        total = cold_seconds + starts[0].seconds
        checks.append(
            Check(
                "cold `make dev-up` (installs + first start)",
                f"{total / 60:.1f} min ({cold_seconds / 60:.1f} min installing)",
                f"≤ {COLD_GOAL / 60:.0f} min",
                total <= COLD_GOAL,
            )
        )
    return print_checks(checks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--restarts", type=int, default=2, help="warm restarts after the first")
    parser.add_argument("--cold", action="store_true", help="also install everything anew")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="lgos-bench-startup-"))
    try:
        cold_seconds = cold_install(scratch) if args.cold else None
        starts = warm(args.restarts, scratch)
        report(starts, cold_seconds)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
