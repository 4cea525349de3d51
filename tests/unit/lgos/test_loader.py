"""Registry targets: ``MODULE:ATTR`` parsing, the settings that name them, merging registries and
the one-line errors of a target that cannot be served (modules stand in through ``sys.modules``)."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest
from lgos import GraphConfig, GraphRegistry
from lgos.loader import (
    TargetError,
    load_registries,
    parse_targets,
    read_project,
    source_folders,
)
from lgos.settings import LGOSSettings
from pydantic import ValidationError


def _graph() -> None:  # never built in these tests
    raise AssertionError


CONFIG = GraphConfig(graph=_graph, description="d")  # type: ignore[arg-type]


def test_targets_are_comma_lists_or_several_strings() -> None:
    assert parse_targets("a:f") == ("a:f",)
    assert parse_targets(" a.b:f , c:g_2,") == ("a.b:f", "c:g_2")
    assert parse_targets(["a:f,b:g", "c:h"]) == ("a:f", "b:g", "c:h")


@pytest.mark.parametrize("bad", ["a", "a:", ":f", "a-b:f", "a:f.g", "a..b:f", "a b:f", "a:f:g"])
def test_malformed_targets_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="expected MODULE:ATTR"):
        parse_targets(bad)


def test_no_target_at_all_is_refused() -> None:
    with pytest.raises(ValueError, match="no registry named"):
        parse_targets(" , ")


DEMO_REGISTRY = "lgos_demo_graphs.registry:create_registry"


def test_the_setting_is_empty_by_default_and_reads_a_list(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LGOS_REGISTRY", raising=False)
    monkeypatch.delenv("LGOS_APP_DIR", raising=False)
    assert LGOSSettings().registry == ()  # lgos knows no graphs of its own
    assert LGOSSettings().app_dir is None
    monkeypatch.setenv("LGOS_REGISTRY", f"{DEMO_REGISTRY}, my_graphs:create_registry")
    monkeypatch.setenv("LGOS_APP_DIR", "/srv/app")
    settings = LGOSSettings()
    assert settings.registry == (DEMO_REGISTRY, "my_graphs:create_registry")
    assert settings.app_dir == Path("/srv/app")
    monkeypatch.setenv("LGOS_REGISTRY", "my_graphs")
    with pytest.raises(ValidationError, match="LGOS_REGISTRY: expected MODULE:ATTR"):
        LGOSSettings()


def test_merge_keeps_order_and_refuses_a_name_twice() -> None:
    first = GraphRegistry.of({"a": CONFIG, "b": CONFIG})
    second = GraphRegistry.of({"c": CONFIG})
    merged = first.merge(second)
    assert list(merged) == ["a", "b", "c"]
    assert merged.created == first.created
    assert list(first) == ["a", "b"]  # the parts are left as they were
    with pytest.raises(ValueError, match="'b' is already registered"):
        merged.merge(GraphRegistry.of({"b": CONFIG}))


@pytest.fixture
def modules(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Stand-in registry modules, and a sys.path restored after the test."""
    monkeypatch.setattr(sys, "path", list(sys.path))

    def module(name: str, **attributes: object) -> None:
        stand_in = types.ModuleType(name)
        stand_in.__file__ = f"/src/{name}.py"
        stand_in.__dict__.update(attributes)
        monkeypatch.setitem(sys.modules, name, stand_in)

    module("one_graphs", create_registry=lambda: GraphRegistry.of({"one": CONFIG}))
    module("two_graphs", REGISTRY=GraphRegistry.of({"two": CONFIG, "one": CONFIG}))
    module("three_graphs", create_registry=lambda: GraphRegistry.of({"three": CONFIG}))
    module("odd_graphs", create_registry=lambda: ["one"], REGISTRY="one", broken=lambda: 1 / 0)
    return monkeypatch


def test_targets_merge_in_order_from_factories_or_registries(
    modules: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    registry = load_registries(["one_graphs:create_registry", "three_graphs:create_registry"])
    assert list(registry) == ["one", "three"]
    assert list(load_registries(["two_graphs:REGISTRY"], tmp_path)) == ["two", "one"]
    assert sys.path[0] == str(tmp_path)  # the app directory is searched first


def test_a_graph_in_two_targets_names_the_graph_and_both(modules: pytest.MonkeyPatch) -> None:
    with pytest.raises(TargetError) as refused:
        load_registries(["one_graphs:create_registry", "two_graphs:REGISTRY"])
    assert str(refused.value) == (
        "graph 'one' is served by both one_graphs:create_registry and two_graphs:REGISTRY"
    )


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("odd_graphs:create_registry", "odd_graphs:create_registry returned list, not a "),
        ("odd_graphs:REGISTRY", "odd_graphs:REGISTRY is str, not a GraphRegistry"),
        ("odd_graphs:missing", "module 'odd_graphs' (/src/odd_graphs.py) has no attribute"),
        ("odd_graphs:broken", "odd_graphs:broken failed at "),
    ],
)
def test_a_target_that_cannot_be_served_is_one_line(
    modules: pytest.MonkeyPatch, target: str, message: str
) -> None:
    with pytest.raises(TargetError) as refused:
        load_registries([target])
    assert str(refused.value).startswith(message)
    assert "\n" not in str(refused.value)


def test_a_missing_app_directory_is_refused(modules: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="does not exist"):
        load_registries(["one_graphs:create_registry"], tmp_path / "absent")


def test_reload_watches_the_folders_the_targets_come_from(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    (tmp_path / "single_module.py").write_text("")
    (tmp_path / "a_package").mkdir()
    (tmp_path / "a_package" / "__init__.py").write_text("")
    targets = ["single_module:f", "a_package.graphs:f", "not_written_yet:f", "sys:path"]
    assert source_folders(targets, tmp_path) == [
        tmp_path,  # a module's folder; a module not found yet is looked for there too
        tmp_path / "a_package",  # a package's own folder, not the one it sits in
    ]  # a built-in module has no folder to watch
    assert "a_package" not in sys.modules  # found, never imported
    import lgos_demo_graphs.registry

    demo = source_folders(["lgos_demo_graphs.registry:create_registry"], tmp_path)
    assert demo == [Path(lgos_demo_graphs.registry.__file__).parent]


def test_the_reload_setting_is_off_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LGOS_RELOAD", raising=False)
    assert LGOSSettings().reload is False
    monkeypatch.setenv("LGOS_RELOAD", "1")
    assert LGOSSettings().reload is True


def write_manifest(folder: Path, table: str) -> Path:
    (folder / "src").mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(f'[project]\nname = "p"\n\n{table}')
    return folder


def test_a_project_names_its_registry_and_app_dir(tmp_path: Path) -> None:
    folder = write_manifest(tmp_path, '[tool.lgos]\nregistry = "a.b:f"\napp-dir = "src"\n')
    project = read_project(folder)
    assert project.registry == ("a.b:f",) and project.app_dir == tmp_path / "src"
    listed = write_manifest(tmp_path / "two", '[tool.lgos]\nregistry = ["a:f", "b:g"]\n')
    assert read_project(listed).registry == ("a:f", "b:g")
    assert read_project(listed).app_dir == listed  # default: the project folder itself


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("", 'has no [tool.lgos] registry = "MODULE:ATTR"'),
        ("[tool.lgos]\napp-dir = 'src'\n", "has no [tool.lgos] registry"),
        ("[tool.lgos]\nregistry = 'a'\n", "registry: expected MODULE:ATTR, got 'a'"),
        ("[tool.lgos]\nregistry = 3\n", "registry: expected MODULE:ATTR or a list of them"),
        ("[tool.lgos]\nregistry = [1]\n", "registry: expected MODULE:ATTR or a list of them"),
        ("[tool.lgos]\nregistry = 'a:f'\napp-dir = 1\n", "app-dir: expected a relative folder"),
        ("[tool.lgos]\nregistry = 'a:f'\napp-dir = '..'\n", "app-dir '..' is not a folder in it"),
        ("[tool.lgos]\nregistry = 'a:f'\napp-dir = 'lib'\n", "app-dir 'lib' is not a folder"),
        ("[tool.lgos\n", "cannot read"),
        ("[tool]\nlgos = 'a:f'\n", 'has no [tool.lgos] registry = "MODULE:ATTR"'),
    ],
)
def test_a_project_that_names_nothing_servable_is_one_line(
    tmp_path: Path, table: str, message: str
) -> None:
    with pytest.raises(TargetError, match=re.escape(message)) as raised:
        read_project(write_manifest(tmp_path, table))
    assert "\n" not in str(raised.value)
    with pytest.raises(TargetError, match=re.escape("has no pyproject.toml")):
        read_project(tmp_path / "absent")
    (tmp_path / "pyproject.toml").write_text("tool = 1\n")
    with pytest.raises(TargetError, match=re.escape("has no [tool.lgos] registry")):
        read_project(tmp_path)
