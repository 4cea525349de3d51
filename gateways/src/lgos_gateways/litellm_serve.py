"""Run the LiteLLM proxy and restart it on SIGHUP, so a catalog sync can swap its config.

LiteLLM without a database reads its model list once at start; restarting the process
is the reload. SIGINT/SIGTERM stop the proxy and this supervisor.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from types import FrameType

from service_kit.logs import configure_logging
from service_kit.tracing import capture_message_content, exporter_configured

logger = logging.getLogger("lgos_gateways.litellm_serve")

HOOKS_DIR = Path(__file__).resolve().parents[2] / "litellm"
"""Holds ``lgos_key_auth.py``, the auth hook the config names (imported by LiteLLM)."""


def child_file(pid_file: Path) -> Path:
    """Where the supervisor names its current proxy process: a sync waits for it to change."""
    return pid_file.with_name(pid_file.name + ".child")


class Supervisor:
    def __init__(
        self, command: list[str], env: dict[str, str], pid_file: Path | None = None
    ) -> None:
        self.command = command
        self.env = env
        self.pid_file = pid_file
        self.child: subprocess.Popen[bytes] | None = None
        self.restart_requested = False
        self.stop_requested = False

    def start(self) -> None:
        self.child = subprocess.Popen(self.command, env=self.env)
        if self.pid_file is not None:
            child_file(self.pid_file).write_text(str(self.child.pid))
        logger.info("litellm started", extra={"pid": self.child.pid})

    def stop_child(self) -> int:
        assert self.child is not None
        self.child.terminate()
        try:
            return self.child.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.child.kill()
            return self.child.wait()

    def on_hup(self, signum: int, frame: FrameType | None) -> None:
        self.restart_requested = True

    def on_stop(self, signum: int, frame: FrameType | None) -> None:
        self.stop_requested = True

    def run(self) -> int:
        signal.signal(signal.SIGHUP, self.on_hup)
        signal.signal(signal.SIGINT, self.on_stop)
        signal.signal(signal.SIGTERM, self.on_stop)
        # Published only once SIGHUP is handled, and removed on the way out, so a sync never
        # signals a supervisor that cannot take it (or a process that reused its pid).
        if self.pid_file is None:
            return self._supervise()
        self.pid_file.parent.mkdir(parents=True, exist_ok=True)
        self.pid_file.write_text(str(os.getpid()))
        try:
            return self._supervise()
        finally:
            self.pid_file.unlink(missing_ok=True)
            child_file(self.pid_file).unlink(missing_ok=True)

    def _supervise(self) -> int:
        self.start()
        assert self.child is not None
        while True:
            if self.stop_requested:
                self.stop_child()
                return 0
            if self.restart_requested:
                self.restart_requested = False
                self.stop_child()
                self.start()
            code = self.child.poll()
            if code is not None:
                logger.error("litellm exited", extra={"code": code})
                return code or 1
            time.sleep(0.2)


def litellm_binary(explicit: str | None) -> str:
    found = explicit or os.environ.get("LITELLM_BIN") or shutil.which("litellm")
    if not found or not Path(found).exists():
        raise SystemExit("LiteLLM is not installed: `make sync` installs it into .tools/litellm")
    return found


def files_defaults(environ: Mapping[str, str]) -> dict[str, str]:
    """LiteLLM 1.108.7 uses ``files_settings`` for uploads only; list, retrieve, content and
    delete go to its default OpenAI credentials. Pointing those at the Files service routes the
    whole Files API there (measured). Model entries must therefore name their own api_base."""
    if not environ.get("FILES_API_BASE"):
        return {}
    return {
        "OPENAI_BASE_URL": environ["FILES_API_BASE"],
        "OPENAI_API_KEY": environ.get("FILES_API_KEY", ""),
    }


def tracing_defaults(environ: Mapping[str, str]) -> dict[str, str]:
    """LiteLLM's own OpenTelemetry integration (its v2, ``LITELLM_OTEL_V2``) follows the
    standard ``OTEL_*`` variables as the services do: on only when they name an endpoint (and
    neither ``OTEL_SDK_DISABLED=true`` nor ``OTEL_TRACES_EXPORTER=none``). Left to itself it
    would print every span to stdout when switched on without one."""
    if not exporter_configured(environ):
        return {"LITELLM_OTEL_V2": "false"}
    return {
        "LITELLM_OTEL_V2": "true",
        # LiteLLM reads OTEL_EXPORTER before OTEL_EXPORTER_OTLP_PROTOCOL; the services export
        # OTLP/HTTP (protobuf) whatever the protocol says, and so does the gateway.
        "OTEL_EXPORTER": "otlp_http",
        "OTEL_SERVICE_NAME": environ.get("OTEL_SERVICE_NAME") or "litellm",
        # LiteLLM records content only for span_only/span_and_event; LGOS's opt-in is `true`.
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": (
            "span_only" if capture_message_content(environ) else "no_content"
        ),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument(
        "--port", type=int, default=int(os.environ.get("OPENAI_GATEWAY_PORT", "3000"))
    )
    parser.add_argument("--pid-file", type=Path, help="where a catalog sync finds this supervisor")
    parser.add_argument("--litellm", help="the litellm executable (default: LITELLM_BIN or PATH)")
    parser.add_argument(
        "litellm_args", nargs=argparse.REMAINDER, help="after --: more arguments for litellm"
    )
    args = parser.parse_args(argv)
    configure_logging(os.environ.get("LGOS_LOG_LEVEL", "info"))
    if not os.environ.get("OPENAI_GATEWAY_API_KEY"):
        raise SystemExit("OPENAI_GATEWAY_API_KEY must be set: it is the gateway's master key")
    # LiteLLM's defaults kept on purpose (scripts/bench_gateway.py --compare settings|server,
    # see docs/project/reliability.md "The gateway hop"): it already runs uvloop;
    # LITELLM_LOG=ERROR, json_logs, disable_spend_logs, turn_off_message_logging and
    # NUM_WORKERS=2 moved the proxy's CPU per request by less than the shared machine's noise;
    # --run_granian looked faster for short requests but is a different server, not yet run
    # through the gateway tests.
    command = [
        litellm_binary(args.litellm),
        "--config",
        str(args.config),
        "--host",
        args.host,
        "--port",
        str(args.port),
        *args.litellm_args[args.litellm_args[:1] == ["--"] :],
    ]
    path = os.pathsep.join(p for p in (str(HOOKS_DIR), os.environ.get("PYTHONPATH")) if p)
    # The cost map ships with LiteLLM; without this it retries a download at every start.
    env = {**os.environ, "PYTHONPATH": path, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.update(files_defaults(os.environ))
    env.update(tracing_defaults(os.environ))
    sys.exit(Supervisor(command, env, args.pid_file).run())


if __name__ == "__main__":
    main()
