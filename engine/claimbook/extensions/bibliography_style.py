"""Author-year labels in the bibliography, matching the author-year citations in the text.

The text cites with sphinxcontrib-bibtex's ``author_year`` reference style ("Santurkar et al.
[2018]", "[Ioffe and Szegedy, 2015]"), but pybtex's default formatting style labels the list
``[STIM18]``, which a reader cannot match to the citation. This extension registers a pybtex
label style that writes the same author part and year the citation shows ("Santurkar et al.,
2018"; one author "Welford, 1962"; two "Ioffe and Szegedy, 2015"), with a, b, ... appended
when two entries would share a label, and a formatting style ``author_year`` that uses it
(sorted by author, year, title). ``_config.yml`` selects it with ``bibtex_default_style``.
"""

from __future__ import annotations

from collections import Counter
from importlib.metadata import entry_points

from pybtex.plugin import register_plugin
from pybtex.style.formatting.alpha import Style as AlphaStyle
from pybtex.style.labels import BaseLabelStyle


def _last_name(person) -> str:
    """The name a citation shows: von part and last name, separated ("van Laarhoven")."""
    parts = [str(part) for part in (*person.rich_prelast_names, *person.rich_last_names)]
    return " ".join(part for part in parts if part).strip() or str(person)


def author_part(entry) -> str:
    """ "Last", "Last and Last", or "Last et al." of the entry's authors (else editors)."""
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [_last_name(person) for person in people]
    if not names:
        return entry.fields.get("organization") or entry.key
    if len(names) == 1:
        return names[0]
    if len(names) == 2:
        return f"{names[0]} and {names[1]}"
    return f"{names[0]} et al."


class AuthorYearLabelStyle(BaseLabelStyle):
    """Labels "Author, Year" (see the module docstring)."""

    def format_labels(self, sorted_entries):
        labels = [
            f"{author_part(entry)}, {entry.fields.get('year', 'n.d.')}" for entry in sorted_entries
        ]
        count, seen = Counter(labels), Counter()
        for label in labels:
            if count[label] == 1:
                yield label
            else:
                yield label + chr(ord("a") + seen[label])
                seen[label] += 1


class AuthorYearStyle(AlphaStyle):
    """pybtex's alpha formatting with author-year labels; each entry formatted once a process.

    sphinxcontrib-bibtex formats every cited entry again on every render (twice: the list and
    the tooltip), about 0.15 s for this book; a build formats them while its chapters execute
    (:func:`format_cited_entries`), so the render after them finds them formatted.
    """

    default_label_style = "author_year"

    def format_entry(self, label, entry, bib_data=None):
        if bib_data is not None:  # cross-references: formatted as pybtex does, every time
            return super().format_entry(label, entry, bib_data)
        key = (type(self), label, _content(entry))
        try:
            return _FORMATTED[key]
        except KeyError:
            formatted = _FORMATTED[key] = super().format_entry(label, entry)
            return formatted


# Formatted entries by style, label and everything the entry holds (a formatted entry is
# never changed once made: sphinxcontrib-bibtex renders it, and pybtex makes new text).
_FORMATTED: dict[tuple, object] = {}


def _content(entry) -> tuple:
    """Everything formatting reads of a pybtex entry, as a hashable value."""
    people = tuple(
        (
            role,
            tuple(
                tuple(
                    tuple(part)
                    for part in (
                        person.first_names,
                        person.middle_names,
                        person.prelast_names,
                        person.last_names,
                        person.lineage_names,
                    )
                )
                for person in persons
            ),
        )
        for role, persons in entry.persons.items()
    )
    return (entry.key, entry.type, tuple((k, str(v)) for k, v in entry.fields.items()), people)


def format_cited_entries(env) -> int:
    """Format every entry the bibliographies of ``env`` list, as its next render will.

    Logs nothing (the render reports any problem). Returns the number of entries formatted.
    """
    from sphinx.util import logging as sphinx_logging
    from sphinxcontrib.bibtex.domain import get_docnames

    domain = env.domains.get("cite")
    if domain is None:
        return 0
    docnames = list(get_docnames(env))
    count = 0
    with sphinx_logging.suppress_logging():
        for key in list(domain.bibliographies):
            count += sum(
                1
                for _ in domain.get_formatted_entries(
                    key, docnames, env.config.bibtex_tooltips, env.config.bibtex_tooltips_style
                )
            )
    return count


register_plugin("pybtex.style.labels", "author_year", AuthorYearLabelStyle)
register_plugin("pybtex.style.formatting", "author_year", AuthorYearStyle)

# pybtex looks a plugin up among the installed packages' entry points each time it is used
# (about 6 ms a lookup, some 70 a render: every citation a claim page or a reader notebook
# formats). The ones the book uses are taken from those entry points once, here.
for _group, _name in (
    ("pybtex.backends", "markdown"),
    ("pybtex.backends", "plaintext"),
    ("pybtex.backends", "docutils"),
    ("pybtex.style.names", "plain"),
    ("pybtex.style.names", "last"),
    ("pybtex.database.input.suffixes", ".bib"),
):
    for _found in entry_points(group=_group, name=_name):
        register_plugin(_group, _name, _found.load(), force=True)


def setup(app):
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
