"""The architecture diagram (docs/explanation/architecture.md) draws what runs: every component
of `make dev` (lgos_stack.components) and every long-running compose service is a node, every
node is one of them, and each node's port is the component's fixed port."""

from __future__ import annotations

import re

import yaml
from lgos_stack.components import components
from lgos_stack.paths import ROOT
from lgos_stack.ports import PORT_VARIABLES, Ports

PAGE = ROOT / "docs" / "explanation" / "architecture.md"
CLIENTS = {"browser", "sdk"}
"""Nodes that are people and scripts, not components."""
COMPOSE_NAMES = {"litellm": "gateway", "bifrost": "gateway"}
"""Compose services drawn under the name `make dev` gives the same role."""


def diagram() -> str:
    return PAGE.read_text().split("```mermaid\n", 1)[1].split("```", 1)[0]


def nodes(mermaid: str) -> dict[str, str]:
    """Node id -> its label ("" when the node is never given one)."""
    found: dict[str, str] = {}
    for line in mermaid.splitlines()[1:]:
        for node_id, label in re.findall(r"([a-z][\w-]*)\s*[\[(]+\"?([^\"\])]*)", line):
            found[node_id] = label
        bare = re.sub(r"[\[(]+\"?[^\"\])]*\"?[\])]+", "", line)
        bare = re.sub(r"-\.\s*[\w ]*\.->", "-->", bare)
        for part in bare.split("-->"):
            if part.strip():
                found.setdefault(part.strip(), "")
    return found


def compose_services() -> set[str]:
    services = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]
    running = {name for name, spec in services.items() if spec.get("restart") != "no"}
    return {COMPOSE_NAMES.get(name, name) for name in running}


def test_the_diagram_draws_every_component_and_only_components() -> None:
    drawn = set(nodes(diagram())) - CLIENTS
    native = {c.name for c in components(Ports.from_env())}
    compose = compose_services()
    assert native - drawn == set(), "make dev components missing from the diagram"
    assert compose - drawn == set(), "compose services missing from the diagram"
    assert drawn - native - compose == set(), "the diagram draws something that does not run"


def test_each_node_shows_its_fixed_port() -> None:
    defaults = Ports(**{name: port for name, (_, port) in PORT_VARIABLES.items()})
    fixed = {component.name: component.port for component in components(defaults)}
    fixed["minio"] = 3009
    for node_id, label in nodes(diagram()).items():
        if node_id in CLIENTS:
            continue
        shown = re.search(r":(\d+)", label)
        assert shown, f"{node_id} shows no port"
        assert int(shown.group(1)) == fixed[node_id], node_id


def test_the_parser_reads_edges_and_labels() -> None:
    found = nodes('flowchart LR\n  a["a :1"] --> b[("b :2")]\n  b -. x .-> c\n  d([d]) --> a\n')
    assert found == {"a": "a :1", "b": "b :2", "c": "", "d": "d"}
