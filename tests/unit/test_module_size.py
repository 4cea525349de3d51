"""No first-party module past a size a reader can hold: 500 lines outside tests and benchmarks.

Long modules were where repeated logic hid (two turn loops, a stack runner with every component
inline); a module that needs more holds two ideas and is split by job.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 500
FIRST_PARTY = ("services", "graphs", "gateways", "ui", "scripts")


def first_party_modules() -> list[Path]:
    modules = []
    for top in FIRST_PARTY:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = path.relative_to(ROOT).parts
            if any(part.startswith(".") or part == "node_modules" for part in parts):
                continue
            if path.name.startswith("bench_"):  # benchmarks are exempt, as tests are
                continue
            modules.append(path)
    return modules


def test_no_first_party_module_is_over_500_lines() -> None:
    modules = first_party_modules()
    assert len(modules) > 100, "the walk found too few modules to mean anything"
    sizes = {path: len(path.read_text().splitlines()) for path in modules}
    too_long = {str(p.relative_to(ROOT)): n for p, n in sizes.items() if n > MAX_LINES}
    assert not too_long, f"split these by job: {too_long}"
