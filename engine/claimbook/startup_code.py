"""Code Python runs at start-up (``*.pth``, ``sitecustomize``, ``usercustomize``) that no
installed distribution's ``RECORD`` lists: a cell that wrote one would run in every later
process, so the build refuses to start while one is present."""

from __future__ import annotations

import csv
import io
import site
from pathlib import Path

STARTUP_NAMES = ("sitecustomize.py", "usercustomize.py")


def _recorded(folder: Path) -> set[Path]:
    """The start-up files the ``RECORD`` of each distribution in ``folder`` lists."""
    listed = set()
    for record in folder.glob("*.dist-info/RECORD"):
        try:
            text = record.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if ".pth" not in text and "customize.py" not in text:  # most list none: skip parsing
            continue
        for row in csv.reader(io.StringIO(text)):
            if row and (row[0].endswith(".pth") or Path(row[0]).name in STARTUP_NAMES):
                listed.add((folder / row[0]).resolve())
    return listed


def foreign_startup_files(folders: list[Path] | None = None) -> list[Path]:
    """``*.pth``, ``sitecustomize.py`` and ``usercustomize.py`` files in ``folders`` (default:
    this interpreter's site-packages) that no distribution installed there lists, sorted."""
    if folders is None:
        folders = [Path(folder) for folder in site.getsitepackages()]
    foreign = []
    for folder in folders:
        if not folder.is_dir():
            continue
        listed = _recorded(folder)
        present = [*folder.glob("*.pth"), *(folder / name for name in STARTUP_NAMES)]
        foreign.extend(path for path in present if path.is_file() and path.resolve() not in listed)
    return sorted(foreign)
