"""advanced-graph compiles to exactly the topology the spec draws (node ids and edges).

``advanced_graph_topology.mmd`` is the spec's Mermaid block, copied verbatim; styling may differ,
node ids, edges and which edges are conditional may not.
"""

from __future__ import annotations

import re
from pathlib import Path

from lgos_demo_graphs.advanced.graph import build

SPEC = Path(__file__).with_name("advanced_graph_topology.mmd")
_NODE = re.compile(r'^\s*(\w+)\["([^"]+)"\]\s*$')
_EDGE = re.compile(r"^\s*(\w+)\s+(-->|-\.->)\s+(\w+)\s*$")

Edge = tuple[str, str, bool]


def spec_topology() -> tuple[set[str], set[Edge]]:
    aliases: dict[str, str] = {}
    edges: set[Edge] = set()
    for line in SPEC.read_text().splitlines():
        if node := _NODE.match(line):
            aliases[node.group(1)] = node.group(2)
        elif edge := _EDGE.match(line):
            source, arrow, target = edge.groups()
            edges.add((aliases[source], aliases[target], arrow == "-.->"))
    return set(aliases.values()), edges


def compiled_topology() -> tuple[set[str], set[Edge]]:
    drawn = build().get_graph(xray=True)
    nodes = set(drawn.nodes)
    edges = {(e.source, e.target, e.conditional) for e in drawn.edges}
    return nodes, edges


def test_compiled_graph_matches_the_spec_drawing() -> None:
    spec_nodes, spec_edges = spec_topology()
    nodes, edges = compiled_topology()
    assert len(spec_nodes) == 12 and len(spec_edges) == 21  # the parser read the whole drawing
    assert nodes == spec_nodes
    assert edges == spec_edges


def test_the_mermaid_output_names_the_same_nodes() -> None:
    mermaid = build().get_graph(xray=True).draw_mermaid()
    for node in spec_topology()[0]:
        # Mermaid escapes ':' in qualified ids as \3a.
        assert node.replace(":", "\\3a") in mermaid
