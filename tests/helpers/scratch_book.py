"""A scratch book root with the engine's paths pointed at it (for tests of path handling)."""

from __future__ import annotations

from pathlib import Path

from claimbook import paths

__all__ = ["point_paths_at"]


def point_paths_at(root: Path, monkeypatch) -> Path:
    """Make ``root`` a book (its artifacts, build and chapters folders) and point the engine's
    paths there for the test; a folder ``outside`` beside it stands for the rest of the disk.
    """
    for name, relative in (
        ("REPO_ROOT", ""),
        ("ARTIFACTS_DIR", "artifacts"),
        ("BUILD_DIR", "_build"),
        ("CHAPTERS_DIR", "chapters"),
    ):
        (root / relative).mkdir(parents=True, exist_ok=True)
        monkeypatch.setattr(paths, name, root / relative if relative else root)
    # Named, not made: a test may put a link there.
    monkeypatch.setattr(paths, "CLAIM_ARTIFACTS_DIR", root / "artifacts" / "claims")
    (root.parent / "outside").mkdir(exist_ok=True)
    return root
