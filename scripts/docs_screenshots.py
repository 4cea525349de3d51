"""Copy screenshots from the browser tests' last run into the docs (``make docs-screenshots``).

The e2e tests save every step under .dev/screenshots/<ui>/ (tests/support/browser.py); the docs
show a few of them from docs/assets/screenshots/<ui>/, so what the pages show is what the tests
saw. Run the browser tests first (``make test-e2e`` or one module, e.g.
``pytest tests/e2e/test_showcase_in_the_uis.py``); ``--ui`` copies one UI's images only (after one
module), ``--source`` reads another run's folder.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from lgos_stack.paths import ROOT

TARGET = ROOT / "docs" / "assets" / "screenshots"
SHOWN = {
    f"{ui}/{shown}.png": ("showcase", f"{ui}-{step}-*.png")
    for ui in ("chainlit", "open-webui")
    for shown, step in (("chat", "03"), ("attachment", "06"), ("citations", "07"), ("review", "08"))
}
"""Docs image -> (the browser test's screenshot folder, the file pattern of the step shown): the
showcase walk, where offline-model answers as a person reads it (not the other tests' echo)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", type=Path, default=ROOT / ".dev" / "screenshots")
    uis = sorted({name.split("/")[0] for name in SHOWN})
    parser.add_argument("--ui", choices=uis, action="append", help="only this UI (repeatable)")
    args = parser.parse_args()
    missing = []
    for name, (folder, pattern) in SHOWN.items():
        if args.ui and name.split("/")[0] not in args.ui:
            continue
        found = sorted((args.source / folder).glob(pattern), key=lambda p: p.stat().st_mtime)
        if not found:
            missing.append(f"{name}: no {folder}/{pattern} (run the showcase browser test)")
            continue
        target = TARGET / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(found[-1], target)
        print(f"{name} <- {found[-1].relative_to(args.source)}")
    for line in missing:
        print(line, file=sys.stderr)
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
