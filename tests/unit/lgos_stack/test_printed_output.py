"""What README.md and the quickstart show `make dev` printing is what it prints: one
"healthy on ... in Ns" line per default component (no opt-in one) at its default port (in the
order they became healthy, which varies: components start side by side), the whole start's time,
then the summary's lines (a shown line may shorten a value with "..." but keeps its label), then
the Ctrl-C line."""

from __future__ import annotations

import re

import pytest
from lgos_stack import runner
from lgos_stack.components import planned
from lgos_stack.model import Stack
from lgos_stack.paths import ROOT
from lgos_stack.ports import PORT_VARIABLES, Ports


def shown_output(page: str) -> list[str]:
    text = (ROOT / page).read_text()
    block = text.split("```\npostgres ", 1)[1].split("```", 1)[0]
    return ("postgres " + block).splitlines()


HEALTHY = re.compile(r"(\S+) +healthy on (\S+) in \d+\.\ds")
TOOK = re.compile(r"stack healthy in \d+\.\ds")


def printed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    for variable, _ in PORT_VARIABLES.values():
        monkeypatch.delenv(variable, raising=False)
    for name in ("DEMO_API_OPENAI_API_KEY", "DEVSTACK_STATE_DIR", "DEVSTACK_SKIP", "DEVSTACK_WITH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DEMO_API_VECTOR_STORE_ID", "vs_...")
    ports = Ports.from_env()
    plan = planned(ports)  # without the opt-in components
    lines = []
    for component in plan:
        scheme = "tcp" if component.tcp_health else "http"
        lines.append(f"{component.name:14} healthy on {scheme}://127.0.0.1:{component.port}")
    lines.append("stack healthy in")
    lines += [line.replace(str(ROOT) + "/", "") for line in runner.summary(Stack(ports), plan)]
    return [*lines, "Ctrl-C stops the stack."]


@pytest.mark.parametrize("page", ["README.md", "docs/tutorials/quickstart.md"])
def test_the_shown_output_is_the_printed_output(page: str, monkeypatch: pytest.MonkeyPatch) -> None:
    shown = [line for line in shown_output(page) if line.strip()]
    real = [part for line in printed(monkeypatch) for part in line.splitlines() if part.strip()]
    assert len(shown) == len(real), f"{page} shows {len(shown)} lines, make dev prints {len(real)}"
    count = real.index("stack healthy in")
    healthy = [HEALTHY.fullmatch(line) for line in shown[:count]]
    assert all(healthy), f"{page}: a component line is not NAME healthy on URL in N.Ns"
    said = sorted(f"{m.group(1):14} healthy on {m.group(2)}" for m in healthy if m)
    assert said == sorted(real[:count]), f"{page} shows other components or ports"
    assert TOOK.fullmatch(shown[count]), f"{page}: {shown[count]!r} is not the whole start's time"
    for show, line in zip(shown[count + 1 :], real[count + 1 :], strict=True):
        if "..." in show:
            head = show.split("...", 1)[0].rstrip(" ,;")
            assert line.startswith(head), f"{page}: {show!r} is not {line!r}"
        else:
            assert show == line, f"{page}: {show!r} is not {line!r}"
