"""JSON responses are orjson's compact UTF-8 encoding with the JSON media type."""

from __future__ import annotations

from service_kit.responses import JSONResponse


def test_compact_utf8_json() -> None:
    response = JSONResponse({"text": "héllo ✓", "n": [1, 2.5, None]}, status_code=201)
    assert response.body == '{"text":"héllo ✓","n":[1,2.5,null]}'.encode()
    assert response.status_code == 201
    assert response.headers["content-type"] == "application/json"
    assert response.headers["content-length"] == str(len(response.body))
