"""Private PostgreSQL and Redis servers that a test may stop, kill and start again.

The machine's shared servers (5432, 6379) serve every developer and CI job at once: restart tests
never touch them. These run on a free port of their own, in a temporary directory:

- ``PrivatePostgres``: the embedded PostgreSQL 18 (+ pgvector) from ``.tools/postgres``; its data
  directory outlives ``stop()``, so ``start()`` brings the same cluster back on the same port.
- ``PrivateRedis``: ``redis-server`` without persistence, so a restart comes back empty.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from lgos_stack.paths import PG_BIN
from lgos_stack.ports import free_port
from lgos_stack.processes import ensure_service_user, interrupt, redis_pong
from lgos_stack.servers import initdb_command, postgres_command, redis_command


def _as_postgres_user() -> dict[str, Any]:
    """PostgreSQL refuses root; as root, run it as the dev stack's system user."""
    user = ensure_service_user()
    return {} if user is None else {"user": user[0], "group": user[1]}


class PrivatePostgres:
    """One embedded PostgreSQL cluster on a free port; ``stop``/``start`` restart it in place."""

    def __init__(self) -> None:
        if not PG_BIN.exists():
            pytest.skip(
                "embedded PostgreSQL is not installed; `make sync` installs .tools/postgres"
            )
        self.bin: Path = PG_BIN
        self.parent = Path(tempfile.mkdtemp(prefix="lgos-private-pg-"))
        os.chmod(self.parent, 0o755)
        self.data = self.parent / "data"
        self.log = self.parent / "postgres.log"
        self.port = free_port()
        self.uri = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self.process: subprocess.Popen[bytes] | None = None
        self._who = _as_postgres_user()
        self.data.mkdir()
        if self._who:
            os.chown(self.data, self._who["user"], self._who["group"])
        subprocess.run(
            initdb_command(self.data),
            check=True,
            stdout=subprocess.DEVNULL,
            **self._who,
        )

    def database_uri(self, name: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def start(self, timeout: float = 30.0) -> None:
        args = postgres_command(self.data, self.port)
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, **self._who)
        deadline = time.monotonic() + timeout
        while True:
            try:
                psycopg.connect(self.uri, connect_timeout=1).close()
                return
            except psycopg.OperationalError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(self.log.read_text()[-4000:]) from None
                time.sleep(0.1)

    def stop(self, how: signal.Signals = signal.SIGINT) -> None:
        """SIGINT: "fast" shutdown (every session is terminated, as in a restart); SIGQUIT:
        "immediate" (the next start recovers from the WAL, as after a crash)."""
        if self.process is not None:
            interrupt(self.process, 30, how)
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.parent, ignore_errors=True)

    def create_database(self, name: str, *, vector: bool = False) -> str:
        with psycopg.connect(self.uri, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        uri = self.database_uri(name)
        if vector:
            with psycopg.connect(uri, autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        return uri


class PrivateRedis:
    """A throwaway redis-server without persistence: a restart comes back empty."""

    def __init__(self, log: Path, port: int | None = None) -> None:
        self.port = port or free_port()
        self.log = log
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        args = redis_command(self.port)
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while not self._answers():
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)

    def _answers(self) -> bool:
        return redis_pong(self.port)

    def stop(self) -> None:
        if self.process is not None:
            interrupt(self.process, 0, signal.SIGKILL)
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()
