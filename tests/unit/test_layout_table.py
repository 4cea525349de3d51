"""The layout table of the docs (docs/reference/layout.md) matches the tree: every folder a
reader looks for has its row, and every row names a path that exists, so the map cannot drift
from the territory."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Second-level folders are listed for these; their children are described inside the rows.
GROUPS = ("services", "ui", "gateways", "scripts", "tests")


def layout_rows() -> list[str]:
    text = (ROOT / "docs" / "reference" / "layout.md").read_text()
    return [line for line in text.splitlines() if line.startswith("| `")]


def listed_paths() -> set[str]:
    paths = set()
    for row in layout_rows():
        first_cell = row.split("|")[1]
        paths.update(path.rstrip("/") for path in re.findall(r"`([^`]+)`", first_cell))
    return paths


def folders() -> set[str]:
    def visible(path: Path) -> bool:
        return path.is_dir() and not path.name.startswith((".", "__")) and path.name != "src"

    top = {p.name for p in ROOT.iterdir() if visible(p)}
    nested = {
        f"{group}/{p.name}" for group in GROUPS for p in (ROOT / group).iterdir() if visible(p)
    }
    return top | nested


def test_every_folder_has_a_row() -> None:
    listed = listed_paths()

    def covered(folder: str) -> bool:
        # A top-level folder may be covered by the rows for what it holds instead of its own.
        return folder in listed or (
            "/" not in folder and any(path.startswith(f"{folder}/") for path in listed)
        )

    missing = sorted(folder for folder in folders() if not covered(folder))
    assert not missing, f"the layout table lacks rows for {missing}"


def test_every_row_names_a_path_that_exists() -> None:
    paths = listed_paths()
    assert len(paths) > 15, "the layout table was not found or lost its rows"
    gone = sorted(path for path in paths if not (ROOT / path).exists())
    assert not gone, f"the layout table names paths that do not exist: {gone}"
