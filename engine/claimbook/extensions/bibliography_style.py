"""Author-year labels in the bibliography, matching the author-year citations in the text:
pybtex style ``author_year``, alpha with labels "Santurkar et al., 2018" (a, b... if equal)."""

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
    """pybtex's alpha formatting with author-year labels."""

    default_label_style = "author_year"


register_plugin("pybtex.style.labels", "author_year", AuthorYearLabelStyle)
register_plugin("pybtex.style.formatting", "author_year", AuthorYearStyle)

# pybtex looks a plugin up among the entry points on every use (about 6 ms each, some 70 a
# render); the ones the book uses are registered once, here.
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
