"""Start the book's chapter numbering at ``trainable_first_chapter`` (this excerpt's 15).

The leading component of every section number is shifted right after Sphinx assigns them
(figure, equation and theorem numbers follow), and shifted back before Sphinx compares them
with the stored ones, so an unchanged book rewrites nothing.
"""

from __future__ import annotations

from sphinx.environment.collectors.toctree import TocTreeCollector

_WRAPPED = "_trainable_first_chapter_wrapped"


def _shift_numbers(secnumbers: dict, offset: int) -> dict:
    return {
        docname: {
            anchor: (number[0] + offset, *number[1:]) if number else number
            for anchor, number in anchors.items()
        }
        for docname, anchors in secnumbers.items()
    }


def _shift_toc_nodes(env, offset: int) -> None:
    """Shift the numbers stored on toc nodes, which the sidebar and rellinks display."""
    for docname in env.toc_secnumbers:
        for node in env.tocs[docname].findall():
            number = node.get("secnumber") if hasattr(node, "get") else None
            if number:
                node["secnumber"] = [number[0] + offset, *number[1:]]
        title = env.titles.get(docname)
        if title is not None and title.get("secnumber"):
            number = title["secnumber"]
            title["secnumber"] = [number[0] + offset, *number[1:]]


def _leaf_collector_classes() -> list[type]:
    """The most derived toctree collector classes, whose method Sphinx actually calls."""
    found, pending = [], [TocTreeCollector]
    while pending:
        cls = pending.pop()
        subclasses = cls.__subclasses__()
        pending.extend(subclasses)
        if not subclasses:
            found.append(cls)
    return found


def _wrap(assign):
    def assign_section_numbers(self, env):
        offset = env.config.trainable_first_chapter - 1
        env.toc_secnumbers = _shift_numbers(env.toc_secnumbers, -offset)
        rewrite_needed = assign(self, env)
        env.toc_secnumbers = _shift_numbers(env.toc_secnumbers, offset)
        _shift_toc_nodes(env, offset)
        return rewrite_needed

    setattr(assign_section_numbers, _WRAPPED, True)
    return assign_section_numbers


def _wrap_assign_section_numbers(app) -> None:
    # After every extension's setup: sphinx-external-toc's subclass renumbers chapters
    # itself, so the most derived method is wrapped.
    for cls in _leaf_collector_classes():
        assign = cls.assign_section_numbers
        if not getattr(assign, _WRAPPED, False):
            cls.assign_section_numbers = _wrap(assign)


def setup(app):
    app.add_config_value("trainable_first_chapter", 1, "env", types=[int])
    app.connect("builder-inited", _wrap_assign_section_numbers)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
