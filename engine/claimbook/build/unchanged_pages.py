"""Pages a render need not write, because Sphinx would write them again with the same bytes.

Sphinx's HTML builder writes a page when its source file is newer than its HTML, and then
every page whose table of contents lists a page it writes. A chapter's pages are all served
from its one executed notebook (:mod:`claimbook.extensions.chapter_pages`), so when a code
edit re-executes a chapter, every page of it is written, though only the pages whose cells
changed were read again; the first page, the chapter's table of contents, is the largest of
the book's pages to write.

A page that was not read again is written with the bytes it has when all of these hold:

- nothing structural changed: no page added or removed, the render not started from an
  empty environment, the builder's configuration and templates as when the page was written
  (Sphinx's own ``.buildinfo`` and template-time checks);
- what other pages show of the pages read again is unchanged (:func:`shown`): their titles
  and tables of contents (sidebars, previous and next links, a chapter's contents list),
  and every domain's data (reference targets, labels, citations, equations, where claims
  are stated); section and figure numbers that changed already make Sphinx write the pages
  that show them, and those pages are kept;
- the page's own inputs have the digest recorded when the published site was rendered
  (its source and every file it depends on: :func:`claimbook.build.render._page_digest`),
  and its published HTML is in the folder being rendered.

Otherwise Sphinx's own rule stands. ``tests/engine/extensions/test_chapter_pages.py`` edits a
fixture book's chapter both ways (a page's cells; a heading other pages list), checks which
pages were written, and compares the site with a render from nothing, byte for byte.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Iterable

__all__ = ["shown", "unchanged_pages"]


class _Domain:
    """One domain's data at a moment, and the objects it lists (its inventory).

    Two are equal when the data compare equal or, for data without value equality (the C
    and C++ domains keep trees of symbol objects; the bibliography keeps formatted entries),
    when the objects are the same: name, shown name, type, page, anchor and priority of
    every target, as the inventory of the site lists them.
    """

    def __init__(self, domain) -> None:
        self.data = copy.deepcopy(domain.data)
        self.objects = sorted(tuple(str(part) for part in item) for item in domain.get_objects())

    def __eq__(self, other) -> bool:
        if not isinstance(other, _Domain):
            return NotImplemented
        return self.objects == other.objects and (
            self.data == other.data or _lacks_value_equality(self.data)
        )


def _lacks_value_equality(data) -> bool:
    """Whether a deep copy of ``data`` compares unequal with a second deep copy of it."""
    return copy.deepcopy(data) != data


def shown(env, docnames: Iterable[str]) -> tuple:
    """What other pages show of ``docnames``, comparable with ``==`` between two moments.

    Titles and tables of contents as text with their attributes (``pformat``: targets,
    anchors, section numbers), and every domain's data and targets (:class:`_Domain`).
    """
    names = sorted(set(docnames))

    def text(table: dict, name: str) -> str | None:
        node = table.get(name)
        return None if node is None else node.pformat()

    return (
        [(name, text(env.titles, name), text(env.longtitles, name)) for name in names],
        [(name, text(env.tocs, name)) for name in names],
        {name: _Domain(domain) for name, domain in sorted(env.domains.items())},
    )


def _builder_unchanged(builder) -> bool:
    """Whether the HTML builder's configuration is the one recorded in the output folder."""
    from sphinx.builders.html import BuildInfo

    try:
        with open(os.path.join(builder.outdir, ".buildinfo"), encoding="utf-8") as stream:
            return BuildInfo.load(stream) == builder.build_info
    except (OSError, ValueError):
        return False


def unchanged_pages(
    builder,
    candidates: Iterable[str],
    published: dict[str, str],
    digest: Callable[[str], str],
) -> set[str]:
    """The ``candidates`` (pages not read again) whose HTML in the output folder is current.

    ``published`` maps a page to its digest when the published site was rendered, and
    ``digest(page)`` gives its digest now. The caller establishes the other conditions of the
    module doc (nothing added or removed, :func:`shown` unchanged).
    """
    if not _builder_unchanged(builder):
        return set()
    newest_template = builder.templates.newest_template_mtime() if builder.templates else 0
    found = set()
    for name in sorted(set(candidates)):
        target = builder.get_outfilename(name)
        try:
            written = os.path.getmtime(target)
        except OSError:
            continue  # not in the folder: it must be written
        if newest_template > written or name not in builder.env.all_docs:
            continue
        if published.get(name) is not None and published.get(name) == digest(name):
            found.add(name)
    return found
