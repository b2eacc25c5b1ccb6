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
    default_label_style = "author_year"


register_plugin("pybtex.style.labels", "author_year", AuthorYearLabelStyle)
register_plugin("pybtex.style.formatting", "author_year", AuthorYearStyle)


def setup(app):
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
