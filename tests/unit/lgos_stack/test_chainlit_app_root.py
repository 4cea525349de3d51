"""Each stack runs Chainlit from an app root of its own: Chainlit deletes ``<root>/.files`` (its
uploads) when it stops, so a stack sharing the checkout's ``ui/chainlit`` would delete the
uploads of every other stack running at the time."""

from __future__ import annotations

from pathlib import Path

import pytest
from lgos_stack import components
from lgos_stack.model import Stack
from lgos_stack.paths import CHAINLIT_DIR
from lgos_stack.ports import Ports


def prepared_root(state: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Chainlit's app root as a stack with ``state`` prepares it before starting Chainlit."""
    monkeypatch.setenv("DEVSTACK_STATE_DIR", str(state))
    state.mkdir(exist_ok=True)
    chainlit = components.chainlit(Ports.from_env())
    assert chainlit.setup is not None
    chainlit.setup(chainlit, Stack(Ports.from_env()))
    return Path(chainlit.env["CHAINLIT_APP_ROOT"])


def test_the_app_root_is_in_the_stacks_state_and_links_the_checkouts_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = prepared_root(tmp_path / "a", monkeypatch)
    assert root.parent == tmp_path / "a"
    for name in (".chainlit", "public", "chainlit.md"):
        assert (root / name).resolve() == (CHAINLIT_DIR / name).resolve()
    assert (root / ".chainlit" / "config.toml").is_file()
    # A restart prepares it again over the links it left.
    assert prepared_root(tmp_path / "a", monkeypatch) == root
    assert (root / "chainlit.md").resolve() == (CHAINLIT_DIR / "chainlit.md").resolve()


def test_two_stacks_never_share_the_uploads_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = prepared_root(tmp_path / "a", monkeypatch)
    second = prepared_root(tmp_path / "b", monkeypatch)
    assert first != second
    assert CHAINLIT_DIR.resolve() not in (first.resolve(), second.resolve())
