"""``lgos new``'s argument handling: what it refuses is one line on stderr and exit status 2,
before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from lgos.cli import main
from lgos.scaffold import ScaffoldError, next_steps, package_of


@pytest.mark.parametrize(
    "name", ["My-Graph", "my_graph", "1graph", "my--graph", "graph-", "-graph", "my graph", ""]
)
def test_a_bad_name_is_one_line_and_exit_2(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["new", "--dir", str(tmp_path / "project"), "--", name])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"lgos: invalid project name {name!r}")
    assert err.count("\n") == 1
    assert not (tmp_path / "project").exists()


@pytest.mark.parametrize("name", ["lgos", "tests", "class", "service-kit"])
def test_a_name_whose_package_is_taken_is_refused(name: str) -> None:
    with pytest.raises(ScaffoldError, match="is taken"):
        package_of(name)


def test_a_non_empty_folder_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(SystemExit) as exited:
        main(["new", "my-graph", "--dir", str(tmp_path)])
    assert exited.value.code == 2
    assert capsys.readouterr().err == f"lgos: {tmp_path} exists and is not an empty folder\n"
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_a_file_in_the_way_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "my-graph").write_text("")
    with pytest.raises(SystemExit) as exited:
        main(["new", "my-graph", "--dir", str(tmp_path / "my-graph")])
    assert exited.value.code == 2
    assert "exists and is not an empty folder" in capsys.readouterr().err


def test_a_name_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["new"])
    assert exited.value.code == 2
    assert "NAME" in capsys.readouterr().err


def test_the_next_steps_name_the_package_and_the_stack_settings() -> None:
    steps = next_steps("my-graph", Path("/home/me/my-graph"))
    assert "cd /home/me/my-graph && uv run pytest" in steps
    assert "uv run lgos serve --project ." in steps
    assert "make dev LGOS_PROJECT=/home/me/my-graph" in steps
