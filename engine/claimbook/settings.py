"""Settings a chapter's prose quotes (glued from its code), never claimed as results.

Results are claims (``{claim-value}``); settings, inputs the chapter chose, are glued with
:func:`glue_setting` and pasted with ``{glue:text}``. :func:`results_pasted_as_glue` names what
the prose pastes with plain glue that the code does not glue as a setting; the build and
``tests/chapters`` refuse each one.

>>> from claimbook import paths
>>> results_pasted_as_glue(paths.CHAPTERS_DIR / "normalization-invariance.md")
[]
"""

from __future__ import annotations

from numbers import Integral, Real
from pathlib import Path

from claimbook.errors import SettingError
from claimbook.sources import read_chapter

SETTING_FUNCTION = "glue_setting"
GLUE_ROLES = frozenset({"glue", "glue:text", "glue:any", "glue:md"})  # myst-nb's paste roles


def glue_setting(name: str, value):
    """Glue ``value`` under ``name`` for the prose, not displayed; return the stored value.

    ``name`` is an identifier; ``value`` a finite number, a string or a tuple/list of them,
    stored as plain Python (a numpy scalar becomes ``int`` or ``float``). Raises SettingError
    otherwise (booleans and non-finite floats included).
    """
    stored = _plain_setting(name, value)
    from myst_nb import glue  # late: only a chapter's kernel glues

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

    Raises ChapterSourceError if the chapter cannot be read or calls ``glue_setting`` with a
    computed name.
    """
    chapter = read_chapter(Path(source).resolve())
    settings = set(chapter.literal_first_arguments(SETTING_FUNCTION))
    found: list[str] = []
    for role in chapter.roles():
        name = role.content.strip().partition(":")[0].strip()
        if role.name in GLUE_ROLES and name not in settings and name not in found:
            found.append(name)
    return found
