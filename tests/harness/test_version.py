"""trainable_harness._version: the one definition of the version, as everything reads it."""

import importlib.metadata

from claimbook import paths, sources
from trainable_harness._version import __version__ as defined


def test_the_installed_distribution_has_that_version():
    """pyproject.toml reads the version from the module (dynamic), so the installed
    metadata cannot say another."""
    assert importlib.metadata.version("trainable-harness") == defined


def test_every_chapter_is_pinned_to_that_version():
    """A chapter's pin names the harness version it was written against; `make repin`
    rewrites it, so on main every pin is the current version."""
    chapters = sorted(paths.CHAPTERS_DIR.glob("*.md"))
    assert chapters
    for chapter in chapters:
        assert sources.read_chapter(chapter).pin == defined, chapter.name
