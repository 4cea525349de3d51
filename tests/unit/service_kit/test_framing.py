"""The framing-error answer itself: a whole HTTP/1.1 response with the envelope, then close.
(tests/fuzz/test_http_framing.py sends garbled bytes to the real servers.)"""

from __future__ import annotations

import json

from service_kit import framing
from uvicorn.importer import import_from_string


def parse(raw: bytes) -> tuple[str, dict[str, str], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return status, headers, body


def test_a_framing_error_is_a_closing_envelope_response() -> None:
    status, headers, body = parse(framing.framing_error(431, "Too big.", "too_big"))
    assert status == "HTTP/1.1 431 Request Header Fields Too Large"
    assert headers == {
        "content-type": "application/json",
        "content-length": str(len(body)),
        "connection": "close",
    }
    assert json.loads(body) == {
        "error": {
            "message": "Too big.",
            "type": "invalid_request_error",
            "param": None,
            "code": "too_big",
        }
    }


def test_the_protocol_string_names_the_envelope_protocol() -> None:
    assert import_from_string(framing.PROTOCOL) is framing.EnvelopeHttpToolsProtocol
