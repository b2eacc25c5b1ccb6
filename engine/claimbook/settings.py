"""Settings, inputs a chapter chose, glued from its code (:func:`glue_setting`) and pasted
in its prose with ``{glue:text}``; results are claims (``{claim-value}``), never glue."""

from numbers import Integral, Real
from pathlib import Path

from claimbook.errors import SettingError
from claimbook.sources import read_chapter

SETTING_FUNCTION = "glue_setting"
GLUE_ROLES = frozenset({"glue", "glue:text", "glue:any", "glue:md"})  # myst-nb's paste roles


def glue_setting(name: str, value):
    """Glue ``value`` under identifier ``name`` for the prose, not displayed; return it as
    stored: plain Python (a numpy scalar as ``int`` or ``float``). SettingError unless it is a
    finite number (not a bool), a string or a tuple/list of them."""
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
    """Names the prose pastes with plain glue that the code does not glue as settings (the
    build refuses each); ChapterSourceError for an unreadable chapter or a computed name."""
    chapter = read_chapter(Path(source).resolve())
    settings = set(chapter.literal_first_arguments(SETTING_FUNCTION))
    found: list[str] = []
    for role in chapter.roles():
        name = role.content.strip().partition(":")[0].strip()
        if role.name in GLUE_ROLES and name not in settings and name not in found:
            found.append(name)
    return found
