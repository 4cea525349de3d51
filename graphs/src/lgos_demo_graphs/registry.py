"""The registry ``lgos serve lgos_demo_graphs.registry:create_registry`` serves."""

from __future__ import annotations

from lgos import GraphRegistry

from lgos_demo_graphs import (
    background_report,
    citation_events,
    display_file,
    interruptible_approval,
    response_outcomes,
    server_tools,
    simple_graph,
    status_events,
)


def create_registry() -> GraphRegistry:
    return GraphRegistry.of(
        {
            "simple-graph": simple_graph.CONFIG,
            "status-events": status_events.CONFIG,
            "response-outcomes": response_outcomes.CONFIG,
            "citation-events": citation_events.CONFIG,
            "server-tools": server_tools.CONFIG,
            "interruptible-approval": interruptible_approval.CONFIG,
            "background-report": background_report.CONFIG,
            "display-file": display_file.CONFIG,
        }
    )
