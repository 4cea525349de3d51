"""The exposition: every registered family, this scrape's readings, and a failing reading left
out rather than failing the scrape."""

from __future__ import annotations

from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families
from service_kit import metrics


async def test_readings_are_added_and_a_failing_one_is_left_out() -> None:
    async def depth() -> metrics.Readings:
        return {"kit_queue_depth": ("Jobs waiting.", 3)}

    async def down() -> metrics.Readings:
        raise ConnectionError("database down")

    metrics.record_response("kit", "GET", "/x", 200, 0.5)
    text = (await metrics.exposition((down, depth))).decode()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert families["kit_queue_depth"].samples[0].value == 3
    requests = families["http_server_requests"].samples
    assert any(
        s.labels == {"service": "kit", "method": "GET", "route": "/x", "status": "200"}
        for s in requests
    )
    assert "gen_ai_server_request_duration_seconds" in families


def test_no_shared_directory_means_nothing_to_mark() -> None:
    metrics.mark_process_dead()  # no PROMETHEUS_MULTIPROC_DIR here: a no-op
    assert metrics.multiprocess_dir() is None


def test_a_remembered_child_counts_in_the_series_labels_names() -> None:
    labels = {"graph": "kit-graph", "outcome": "completed"}
    before = REGISTRY.get_sample_value("lgos_runs_total", labels) or 0.0
    metrics.child(metrics.RUNS, "kit-graph", "completed").inc()
    metrics.child(metrics.RUNS, "kit-graph", "completed").inc()
    assert metrics.child(metrics.RUNS, "kit-graph", "completed") is metrics.RUNS.labels(
        "kit-graph", "completed"
    )
    assert REGISTRY.get_sample_value("lgos_runs_total", labels) == before + 2
    # The same values under another metric are that metric's own child.
    assert metrics.child(metrics.RUN_CONFLICTS, "kit-graph", "completed") is not metrics.child(
        metrics.RUNS, "kit-graph", "completed"
    )


def test_a_method_outside_http_s_own_is_counted_as_other() -> None:
    for method in ("BREW", "get", "POST\x00", None):
        metrics.record_response("kit-methods", method, "/x", 404, 0.01)
    metrics.record_response("kit-methods", "PATCH", "/x", 404, 0.01)
    sample = "http_server_requests_total"
    labels = {"service": "kit-methods", "route": "/x", "status": "404"}
    assert REGISTRY.get_sample_value(sample, {**labels, "method": "_OTHER"}) == 4
    assert REGISTRY.get_sample_value(sample, {**labels, "method": "PATCH"}) == 1
    methods = {
        s.labels["method"]
        for family in REGISTRY.collect()
        for s in family.samples
        if s.labels.get("service") == "kit-methods"
    }
    assert methods == {"_OTHER", "PATCH"}
