"""claimbook.extensions.bibliography_style: list labels that match the citations in the text."""

from pybtex.database import Entry, Person, parse_string
from pybtex.plugin import find_plugin

from claimbook import paths
from claimbook.extensions.bibliography_style import AuthorYearLabelStyle, author_part


def _entry(key, authors=(), editors=(), **fields):
    entry = Entry("article", fields={"title": key, **fields})
    entry.key = key
    for name in authors:
        entry.add_person(Person(name), "author")
    for name in editors:
        entry.add_person(Person(name), "editor")
    return entry


def test_the_author_part_is_one_name_two_names_or_the_first_et_al():
    assert author_part(_entry("a", ["Welford, B. P."])) == "Welford"
    assert author_part(_entry("b", ["Ioffe, Sergey", "Szegedy, Christian"])) == "Ioffe and Szegedy"
    three = ["Santurkar, S.", "Tsipras, D.", "Ilyas, A."]
    assert author_part(_entry("c", three)) == "Santurkar et al."


def test_a_von_part_stays_with_the_last_name():
    assert author_part(_entry("d", ["van Laarhoven, Twan"])) == "van Laarhoven"


def test_editors_stand_in_for_missing_authors_then_the_organization_then_the_key():
    assert author_part(_entry("e", editors=["Knuth, Donald"])) == "Knuth"
    assert author_part(_entry("f", organization="NVIDIA")) == "NVIDIA"
    assert author_part(_entry("g")) == "g"


def test_labels_are_author_and_year_with_a_letter_only_where_two_would_be_equal():
    entries = [
        _entry("x1", ["Ba, J."], year="2016"),
        _entry("x2", ["Ba, J."], year="2016"),
        _entry("y", ["Wu, Y.", "He, K."], year="2018"),
        _entry("z", ["Chan, T."]),
    ]
    labels = list(AuthorYearLabelStyle().format_labels(entries))
    assert labels == ["Ba, 2016a", "Ba, 2016b", "Wu and He, 2018", "Chan, n.d."]


def test_the_styles_are_registered_under_the_name_the_configuration_selects():
    assert find_plugin("pybtex.style.labels", "author_year") is AuthorYearLabelStyle
    config = (paths.REPO_ROOT / "_config.yml").read_text(encoding="utf-8")
    assert "bibtex_default_style: author_year" in config


def test_every_entry_of_the_books_bibliography_gets_a_distinct_label():
    data = parse_string((paths.REPO_ROOT / "references.bib").read_text(encoding="utf-8"), "bibtex")
    labels = list(AuthorYearLabelStyle().format_labels(data.entries.values()))
    assert len(labels) == len(data.entries) == len(set(labels))
    assert all(", " in label for label in labels)


def test_an_entry_is_formatted_as_pybtex_alpha_formats_it():
    from pybtex.style.formatting.alpha import Style as AlphaStyle

    from claimbook.extensions.bibliography_style import AuthorYearStyle

    data = parse_string((paths.REPO_ROOT / "references.bib").read_text(encoding="utf-8"), "bibtex")
    style, plain = AuthorYearStyle(), AlphaStyle()
    for key, entry in data.entries.items():
        formatted, expected = (s.format_entry("Label, 2020", entry) for s in (style, plain))
        assert formatted.text.render_as("text") == expected.text.render_as("text"), key
        assert (formatted.key, formatted.label) == (expected.key, expected.label)
