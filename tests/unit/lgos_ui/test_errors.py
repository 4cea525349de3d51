"""The gateway's error envelope, as a UI shows it to the person."""

from __future__ import annotations

from lgos_ui.errors import gateway_error_text


def test_the_envelopes_message_wins_over_the_sdks_text() -> None:
    body = {"error": {"message": "lgos_settings: audience must be one of general", "code": None}}
    assert gateway_error_text(400, "Error code: 400 - {...}", body) == (
        "The gateway answered 400: lgos_settings: audience must be one of general"
    )


def test_an_unwrapped_or_missing_envelope_keeps_a_readable_text() -> None:
    assert gateway_error_text(422, "raw", {"message": "flat"}) == "The gateway answered 422: flat"
    assert gateway_error_text(502, "Bad Gateway", None) == "The gateway answered 502: Bad Gateway"
    assert gateway_error_text(500, "x", {"error": {"message": 7}}) == "The gateway answered 500: x"
