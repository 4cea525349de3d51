"""A background job crosses processes as plain JSON; its decoded request stays in this one."""

from __future__ import annotations

import orjson
from lgos.background.backend import BackgroundJob


def test_a_job_round_trips_through_json_without_its_decoded_request() -> None:
    job = BackgroundJob("resp_1", "shared", "m", {"input": "x"}, 7, "run", decoded=object())
    stored = job.to_json()
    assert stored == {
        "response_id": "resp_1",
        "scope": "shared",
        "model": "m",
        "body": {"input": "x"},
        "created_at": 7,
        "run_id": "run",
    }
    loaded = BackgroundJob.from_json(orjson.loads(orjson.dumps(stored)))
    assert loaded == job
    assert loaded.decoded is None
