"""The exposition: every registered family, this scrape's readings, and a failing reading left
out rather than failing the scrape."""

from __future__ import annotations

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
