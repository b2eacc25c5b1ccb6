"""Settings and inputs a chapter's prose quotes: glued from the code, never claimed as results.

A chapter states two kinds of numbers. *Results* (a measured deviation, a rank, a gap) are
claims: the prose shows them with ``{claim-value}`<id>.<field>``` and the page binds them to
the claim's state. *Settings* (a batch size, a number of batches, a momentum) are inputs the
chapter chose; the prose quotes them with ``{glue:text}`name``` and the page prints them as
plain text. A chapter marks which glued names are settings by gluing them with
:func:`glue_setting` rather than ``myst_nb.glue``; :func:`results_pasted_as_glue` finds every
name the prose pastes with plain glue that the code does not glue as a setting, and the book
build (``claimbook.extensions.claims``) and ``tests/chapters/test_chapters.py`` refuse each one.

Examples
--------
>>> from claimbook import paths
>>> results_pasted_as_glue(paths.CHAPTERS_DIR / "normalization-invariance.md")
[]
"""

from __future__ import annotations

from numbers import Integral, Real
from pathlib import Path

from claimbook import cache
from claimbook.errors import SettingError
from claimbook.sources import read_chapter

__all__ = ["GLUE_ROLES", "SETTING_FUNCTION", "glue_setting", "results_pasted_as_glue"]

# The name the source check looks for in code cells (a call, found with ast).
SETTING_FUNCTION = "glue_setting"
# Roles with which myst-nb pastes a glued value into prose.
GLUE_ROLES = frozenset({"glue", "glue:text", "glue:any", "glue:md"})


def glue_setting(name: str, value):
    """Glue a setting or input ``value`` under ``name`` for the prose, without displaying it.

    The value is stored as a plain Python scalar (a numpy integer or float becomes ``int`` or
    ``float``, so the page never shows a numpy repr), and the call marks ``name`` as a setting
    for the source check. Returns the stored value.

    Parameters
    ----------
    name : str
        A Python identifier; the prose pastes it with ``{glue:text}`name```.
    value : int, float, str or tuple/list of them
        The setting. Booleans and non-finite floats are refused: a setting is a choice the
        chapter made, stated as a number or a word.

    Raises
    ------
    SettingError
        If ``name`` is not an identifier or ``value`` is not a finite number, a string, or a
        sequence of them.

    Examples
    --------
    >>> import numpy as np
    >>> _plain_setting("batch_size", np.int64(32))
    32
    >>> _plain_setting("momenta", (0.01, np.float64(0.1)))
    (0.01, 0.1)
    >>> _plain_setting("batch-size", 8)
    Traceback (most recent call last):
    ...
    claimbook.errors.SettingError: glue_setting: name 'batch-size' is not an identifier
    """
    stored = _plain_setting(name, value)
    from myst_nb import glue  # imported here: the harness itself does not need myst-nb

    glue(name, stored, display=False)
    return stored


def _plain_setting(name: str, value):
    if not isinstance(name, str) or not name.isidentifier():
        raise SettingError(f"glue_setting: name {name!r} is not an identifier")
    if isinstance(value, (list, tuple)):
        return type(value)(_plain_setting(name, item) for item in value)
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, Real):
        raise SettingError(
            f"glue_setting: {name} must be a number, a string or a sequence of them, "
            f"got {type(value).__name__}"
        )
    if isinstance(value, Integral):
        return int(value)
    value = float(value)
    if value != value or value in (float("inf"), float("-inf")):
        raise SettingError(f"glue_setting: {name} is not finite ({value})")
    return value


def results_pasted_as_glue(source: str | Path) -> list[str]:
    """Names the chapter's prose pastes with plain glue that its code does not glue as settings.

    Reads the chapter with :func:`claimbook.sources.read_chapter`: the roles come from
    the prose as MyST parses it (an example inside a code fence is not a role), the settings
    from the literal first arguments of ``glue_setting(...)`` calls in code cells.

    Raises
    ------
    ChapterSourceError
        If the chapter cannot be read, or calls ``glue_setting`` with a computed name.
    """
    path = Path(source).resolve()
    data = cache.file_bytes(path)
    if data is None:
        return _results_pasted_as_glue(path)  # raises ChapterSourceError, naming the file
    return list(_PASTED.get(cache.digest(data), lambda: tuple(_results_pasted_as_glue(path))))


# A chapter's answer, by the source's bytes: the build asks while it waits for its chapters,
# and the render asks again for the same unchanged source.
_PASTED = cache.ContentCache("glue checks")


def _results_pasted_as_glue(source: Path) -> list[str]:
    chapter = read_chapter(source)
    settings = set(chapter.literal_first_arguments(SETTING_FUNCTION))
    found: list[str] = []
    for role in chapter.roles():
        if role.name not in GLUE_ROLES:
            continue
        name = role.content.strip().partition(":")[0].strip()
        if name not in settings and name not in found:
            found.append(name)
    return found
