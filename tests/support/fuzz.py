"""One place for the fuzz tier's budget (examples per test, the seed, the deep profile) and for
how a schemathesis case runs against a served document.

``make test`` runs the bounded ``ci`` profile with a fixed seed; ``LGOS_FUZZ_PROFILE=deep``
runs many more examples, and ``LGOS_FUZZ_SEED`` replays or varies a run.
"""

from __future__ import annotations

import os
from typing import Any

import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis import seed as hypothesis_seed
from schemathesis import Case
from schemathesis.specs.openapi.checks import positive_data_acceptance, unsupported_method

from tests.support.envelopes import check_envelope

PROFILE = os.environ.get("LGOS_FUZZ_PROFILE", "ci")
if PROFILE not in ("ci", "deep"):
    raise RuntimeError(f"LGOS_FUZZ_PROFILE must be 'ci' or 'deep', not {PROFILE!r}")
SEED = int(os.environ.get("LGOS_FUZZ_SEED", "20261201"))

PROPERTY_EXAMPLES = {"ci": 300, "deep": 5000}[PROFILE]
"""Examples per Hypothesis property of a pure codec."""
HTTP_EXAMPLES = {"ci": 60, "deep": 1000}[PROFILE]
"""Examples per Hypothesis property that sends HTTP requests."""
SCHEMA_EXAMPLES = {"ci": 30, "deep": 500}[PROFILE]
"""Schemathesis examples per operation and generation mode (positive, negative)."""

# The documents state shapes; pairing of calls and outputs, unique tool names, registered
# server tools, the NUL rule and the like are checked by the decoders (400s naming the param),
# so schema-valid data may still be a precise 400. Starlette's 405 lists the methods of one
# route, not of the path (and adds HEAD to GET): that check is left out too. Every other
# check runs.
EXCLUDED_CHECKS = [positive_data_acceptance, unsupported_method]

_SETTINGS = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "database": None,
    "print_blob": True,
}


def fuzz(max_examples: int = PROPERTY_EXAMPLES) -> Any:
    """Decorator: Hypothesis settings of this profile plus its seed."""

    def apply(test: Any) -> Any:
        return hypothesis_seed(SEED)(settings(max_examples=max_examples, **_SETTINGS)(test))

    return apply


def schemathesis_config() -> dict[str, Any]:
    return {
        "seed": SEED,
        # Undocumented extra parameters are off: routes ignore unknown query parameters (as
        # FastAPI does), and random extra headers reach HTTP framing (see tests/fuzz/conftest.py).
        "generation": {
            "mode": "all",
            "max-examples": SCHEMA_EXAMPLES,
            "allow-x00": True,
            "allow-extra-parameters": False,
        },
        "phases": {"stateful": {"enabled": False}},
        # Starlette's 405 lists the methods of one route, not of the path: a known deviation.
        "checks": {"unsupported_method": {"enabled": False}},
        "suppress-health-check": ["too_slow", "filter_too_much", "data_too_large"],
    }


def openapi_schema(document: dict[str, Any]) -> Any:
    """Schemathesis over ``document`` with this profile's configuration."""
    return schemathesis.openapi.from_dict(
        document, config=schemathesis.Config.from_dict(schemathesis_config())
    )


def assert_total(case: Case, base_url: str, **options: Any) -> None:
    """Send ``case``: a documented answer, and any error in the OpenAI envelope."""
    response = case.call_and_validate(
        base_url=base_url, timeout=30, excluded_checks=EXCLUDED_CHECKS, **options
    )
    check_envelope(case, response.status_code, response.json() if response.content else None)
