"""A background job crosses processes as plain JSON; its decoded request stays in this one."""

from __future__ import annotations

import orjson
from lgos.background.backend import BackgroundJob


def test_a_job_round_trips_through_json_without_its_decoded_request() -> None:
    job = BackgroundJob(
        "resp_1", "shared", "m", {"input": "x"}, 7, "run", request_id="req_1", decoded=object()
    )
    stored = job.to_json()
    assert stored == {
        "response_id": "resp_1",
        "scope": "shared",
        "model": "m",
        "body": {"input": "x"},
        "created_at": 7,
        "run_id": "run",
        "request_id": "req_1",
        "traceparent": None,
    }
    loaded = BackgroundJob.from_json(orjson.loads(orjson.dumps(stored)))
    assert loaded == job
    assert loaded.decoded is None


def test_a_job_stored_by_another_version_still_loads() -> None:
    older = {"response_id": "r", "scope": "s", "model": "m", "body": {}, "created_at": 1}
    assert BackgroundJob.from_json(older).request_id is None
    newer = {**older, "request_id": "req_2", "priority": 3}
    assert BackgroundJob.from_json(newer).request_id == "req_2"
