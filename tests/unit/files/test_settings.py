"""FILES_* settings: key lists, S3 requirements, bounds."""

from __future__ import annotations

import pytest
from files_service.settings import FilesSettings
from pydantic import ValidationError


def test_defaults_are_the_native_stack(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = FilesSettings()
    assert settings.port == 3006 and settings.storage == "disk"
    assert settings.api_keys == [] and settings.embeddings_url is None


def test_keys_are_comma_separated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FILES_API_KEYS", " sk-one , sk-two,,")
    keys = FilesSettings().api_keys
    assert [k.get_secret_value() for k in keys] == ["sk-one", "sk-two"]
    assert "sk-one" not in repr(FilesSettings())


def test_s3_needs_endpoint_and_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FILES_STORAGE", "s3")
    with pytest.raises(ValidationError, match="FILES_S3_ENDPOINT"):
        FilesSettings()
    monkeypatch.setenv("FILES_S3_ENDPOINT", "minio:9000")
    monkeypatch.setenv("FILES_S3_ACCESS_KEY", "k")
    monkeypatch.setenv("FILES_S3_SECRET_KEY", "s")
    assert FilesSettings().s3_bucket == "lgos-files"


def test_bounds_are_validated() -> None:
    with pytest.raises(ValidationError):
        FilesSettings(max_upload_bytes=0)
    with pytest.raises(ValidationError):
        FilesSettings(indexing_timeout=0)


def test_orphan_grace_is_read_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    assert FilesSettings().orphan_grace == 3600.0
    monkeypatch.setenv("FILES_ORPHAN_GRACE", "90")
    assert FilesSettings().orphan_grace == 90.0
    monkeypatch.setenv("FILES_ORPHAN_GRACE", "0")
    with pytest.raises(ValidationError):
        FilesSettings()
