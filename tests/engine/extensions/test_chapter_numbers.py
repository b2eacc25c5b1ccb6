"""claimbook.extensions.chapter_numbers: the first chapter reads 15, and nothing else moves."""

from types import SimpleNamespace

from docutils import nodes
from sphinx.environment.collectors.toctree import TocTreeCollector

from claimbook.extensions import chapter_numbers


def test_only_the_leading_component_of_each_number_shifts():
    numbers = {
        "chapters/a": {"": (1,), "#one": (1, 1), "#one-a": (1, 1, 2)},
        "chapters/b": {"": (2,), "#empty": ()},
    }
    shifted = chapter_numbers._shift_numbers(numbers, 14)
    assert shifted == {
        "chapters/a": {"": (15,), "#one": (15, 1), "#one-a": (15, 1, 2)},
        "chapters/b": {"": (16,), "#empty": ()},
    }
    assert chapter_numbers._shift_numbers(shifted, -14) == numbers
    assert numbers["chapters/a"]["#one"] == (1, 1)  # the input is not changed


def _environment():
    entry = nodes.reference("", "One")
    toc = nodes.bullet_list("", nodes.list_item("", entry))
    title = nodes.title("", "A")
    environment = SimpleNamespace(
        config=SimpleNamespace(trainable_first_chapter=15),
        toc_secnumbers={"chapters/a": {"": (15,), "#one": (15, 1)}},  # as the last build left
        tocs={"chapters/a": toc},
        titles={"chapters/a": title},
    )
    return environment, entry, title


def test_sphinx_compares_numbers_from_one_and_the_pages_show_them_from_fifteen():
    seen = []

    def assign(self, env):  # what Sphinx does: compare, number from 1, set the toc nodes
        seen.append(env.toc_secnumbers)
        entry["secnumber"], title["secnumber"] = [1, 1], [1]
        return ["chapters/a"]

    environment, entry, title = _environment()
    wrapped = chapter_numbers._wrap(assign)
    assert wrapped(None, environment) == ["chapters/a"]
    assert seen == [{"chapters/a": {"": (1,), "#one": (1, 1)}}]  # an unchanged book is unchanged
    assert environment.toc_secnumbers == {"chapters/a": {"": (15,), "#one": (15, 1)}}
    assert entry["secnumber"] == [15, 1] and title["secnumber"] == [15]
    assert getattr(wrapped, chapter_numbers._WRAPPED) is True


def test_the_wrapped_classes_are_the_most_derived_collectors():
    classes = chapter_numbers._leaf_collector_classes()
    assert classes
    for cls in classes:
        assert issubclass(cls, TocTreeCollector) and not cls.__subclasses__()
