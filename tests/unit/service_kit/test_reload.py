"""The command a reloading supervisor runs as its child: the same one, without ``--reload``."""

from __future__ import annotations

from service_kit.reload import without_reload


def test_the_child_command_drops_reload_and_its_abbreviations_only() -> None:
    argv = ["serve", "my_graphs:f", "--reload", "--port", "3004", "--relo", "--app-dir", "r"]
    assert without_reload(argv) == ["serve", "my_graphs:f", "--port", "3004", "--app-dir", "r"]
    assert without_reload(["worker", "--r", "--", "-r", "--rex"]) == ["worker", "--", "-r", "--rex"]
