"""Start the book's chapter numbering at ``trainable_first_chapter``: section numbers shifted
after Sphinx assigns them (figure numbers follow) and back before it compares them."""

from docutils import nodes
from sphinx.environment.collectors.toctree import TocTreeCollector

_WRAPPED = "_trainable_first_chapter_wrapped"


def _shifted(number, offset: int):
    """``number`` (a tuple or list) with its leading component shifted; empty as it is."""
    return type(number)([number[0] + offset, *number[1:]]) if number else number


def _shift_numbers(secnumbers: dict, offset: int) -> dict:
    return {
        docname: {anchor: _shifted(number, offset) for anchor, number in anchors.items()}
        for docname, anchors in secnumbers.items()
    }


def _leaf_collector_classes(cls: type = TocTreeCollector) -> list[type]:
    """The most derived toctree collector classes, whose method Sphinx calls."""
    subclasses = cls.__subclasses__()
    return [leaf for sub in subclasses for leaf in _leaf_collector_classes(sub)] or [cls]


def _wrap(assign):
    def assign_section_numbers(self, env):
        offset = env.config.trainable_first_chapter - 1
        env.toc_secnumbers = _shift_numbers(env.toc_secnumbers, -offset)
        rewrite_needed = assign(self, env)
        env.toc_secnumbers = _shift_numbers(env.toc_secnumbers, offset)
        # The numbers stored on toc nodes and titles, which the sidebar and rellinks show.
        for docname in env.toc_secnumbers:
            numbered = [*env.tocs[docname].findall(nodes.Element), env.titles.get(docname)]
            for node in numbered:
                if node is not None and node.get("secnumber"):
                    node["secnumber"] = list(_shifted(node["secnumber"], offset))
        return rewrite_needed

    setattr(assign_section_numbers, _WRAPPED, True)
    return assign_section_numbers


def setup(app):
    app.add_config_value("trainable_first_chapter", 1, "env", types=[int])

    def wrap_assign_section_numbers(app) -> None:
        # After every extension's setup: sphinx-external-toc's subclass renumbers chapters
        # itself, so the most derived method is wrapped.
        for cls in _leaf_collector_classes():
            if not getattr(cls.assign_section_numbers, _WRAPPED, False):
                cls.assign_section_numbers = _wrap(cls.assign_section_numbers)

    app.connect("builder-inited", wrap_assign_section_numbers)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
