"""The error module: one class per HTTP status, each with a declared envelope type."""

from __future__ import annotations

from typing import get_args

import pytest
from lgos import errors
from lgos.errors import (
    ConflictError,
    ErrorType,
    InternalServerError,
    InvalidRequestError,
    LGOSError,
    NotFoundError,
    UnprocessableEntityError,
)

STATUS_CLASSES = {
    400: InvalidRequestError,
    404: NotFoundError,
    409: ConflictError,
    422: UnprocessableEntityError,
    500: InternalServerError,
}


def all_error_classes() -> list[type[LGOSError]]:
    return [
        value
        for value in vars(errors).values()
        if isinstance(value, type) and issubclass(value, LGOSError)
    ]


def test_one_class_per_status() -> None:
    """Each status has one class (its subclasses only add fixed messages and attributes)."""
    roots: dict[int, list[type[LGOSError]]] = {}
    for cls in all_error_classes():
        parent = cls.__bases__[0]
        if cls is not LGOSError and (parent is LGOSError or parent.status_code != cls.status_code):
            roots.setdefault(cls.status_code, []).append(cls)
    assert {status: classes for status, classes in roots.items() if len(classes) > 1} == {}
    assert {status: classes[0] for status, classes in roots.items()}.items() >= (
        STATUS_CLASSES.items()
    )


@pytest.mark.parametrize("status", sorted(STATUS_CLASSES))
def test_envelope_carries_the_class_type(status: int) -> None:
    cls = STATUS_CLASSES[status]
    error = InternalServerError() if cls is InternalServerError else cls("no", param="p", code="c")
    envelope = error.to_envelope()["error"]
    assert error.status_code == status
    assert envelope["type"] == ("server_error" if status >= 500 else "invalid_request_error")
    assert set(envelope) == {"message", "type", "param", "code"}


def test_every_declared_type_is_emitted() -> None:
    emitted = {cls.type for cls in all_error_classes()}
    assert emitted == set(get_args(ErrorType))


def test_invalid_request_error_keeps_its_status_keyword() -> None:
    """Graph authors raised ``InvalidRequestError(status_code=...)`` before the subclasses."""
    error = InvalidRequestError("Gone.", param="x", code="gone", status_code=404)
    assert error.status_code == 404
    assert error.to_envelope() == {
        "error": {"message": "Gone.", "type": "invalid_request_error", "param": "x", "code": "gone"}
    }
    assert InvalidRequestError("Bad.").status_code == 400
