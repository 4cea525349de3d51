"""Run conflicts: the runtime reports them, the Responses protocol names the request field."""

from __future__ import annotations

import pytest
from lgos.errors import ConflictError, LeaseLostError, RunConflictError
from lgos.protocol.responses.runs import naming_the_paused_response
from lgos.runtime.runner import translate_failure
from prometheus_client import REGISTRY


def test_a_lost_lease_is_a_busy_run_about_no_request_field() -> None:
    error = translate_failure(LeaseLostError("lost"), model="m")
    assert isinstance(error, RunConflictError)
    assert (error.status_code, error.code, error.param) == (409, "run_busy", None)


def conflicts(graph: str, code: str) -> float:
    return (
        REGISTRY.get_sample_value("lgos_run_conflicts_total", {"graph": graph, "code": code}) or 0.0
    )


def test_the_responses_protocol_names_previous_response_id() -> None:
    before = conflicts("g", "run_busy")
    with pytest.raises(RunConflictError) as caught, naming_the_paused_response("g"):
        raise RunConflictError("This run is already executing.", code="run_busy")
    assert conflicts("g", "run_busy") == before + 1
    assert caught.value.to_envelope()["error"] == {
        "message": "This run is already executing.",
        "type": "invalid_request_error",
        "param": "previous_response_id",
        "code": "run_busy",
    }


def test_other_conflicts_keep_their_own_param() -> None:
    with pytest.raises(ConflictError) as caught, naming_the_paused_response("g"):
        raise ConflictError("A graph's own conflict.", param="metadata")
    assert caught.value.param == "metadata"
