"""``claimbook.build.unchanged_pages``: when a page Sphinx would write again is left as it is."""

from __future__ import annotations

import os

from sphinx.builders.html import BuildInfo

from claimbook.build import unchanged_pages
from claimbook.build.unchanged_pages import _Domain


class _Node:
    """Data without value equality, like the C domain's symbol trees."""


class _FakeDomain:
    def __init__(self, data, objects):
        self.data = data
        self._objects = objects

    def get_objects(self):
        return iter(self._objects)


TARGET = [("sec-a", "Section A", "label", "chapters/one", "sec-a", -1)]


def test_domain_data_with_value_equality_must_be_equal():
    assert _Domain(_FakeDomain({"labels": {"a": 1}}, TARGET)) == _Domain(
        _FakeDomain({"labels": {"a": 1}}, TARGET)
    )
    assert _Domain(_FakeDomain({"labels": {"a": 1}}, TARGET)) != _Domain(
        _FakeDomain({"labels": {"a": 2}}, TARGET)
    )


def test_domain_data_without_value_equality_is_compared_by_its_targets():
    assert _Domain(_FakeDomain({"root": _Node()}, TARGET)) == _Domain(
        _FakeDomain({"root": _Node()}, TARGET)
    )
    moved = [(*TARGET[0][:3], "chapters/one-more", *TARGET[0][4:])]
    assert _Domain(_FakeDomain({"root": _Node()}, TARGET)) != _Domain(
        _FakeDomain({"root": _Node()}, moved)
    )


class _Templates:
    def __init__(self, newest: float) -> None:
        self.newest = newest

    def newest_template_mtime(self) -> float:
        return self.newest


class _Env:
    def __init__(self) -> None:
        self.all_docs = {"a": 0, "b": 0, "c": 0, "d": 0}


def _info(config_hash: str) -> BuildInfo:
    info = BuildInfo()
    info.config_hash, info.tags_hash = config_hash, "t"
    return info


class _Builder:
    def __init__(self, outdir, newest_template: float = 0.0) -> None:
        self.outdir = str(outdir)
        self.templates = _Templates(newest_template)
        self.env = _Env()
        self.build_info = _info("c")

    def get_outfilename(self, name: str) -> str:
        return os.path.join(self.outdir, f"{name}.html")


def _site(tmp_path, names=("a", "b", "c"), info=True):
    for name in names:
        (tmp_path / f"{name}.html").write_text(name, encoding="utf-8")
    if info:
        builder = _Builder(tmp_path)
        with open(tmp_path / ".buildinfo", "w", encoding="utf-8") as stream:
            builder.build_info.dump(stream)
    return tmp_path


PUBLISHED = {"a": "1", "b": "2", "c": "3", "d": "4"}
NOW = {"a": "1", "b": "changed", "c": "3", "d": "4"}


def test_a_page_is_left_only_with_its_digest_as_published_and_its_html_there(tmp_path):
    builder = _Builder(_site(tmp_path))  # d has no HTML
    found = unchanged_pages.unchanged_pages(builder, "abcd", PUBLISHED, NOW.__getitem__)
    assert found == {"a", "c"}


def test_newer_templates_or_another_configuration_leave_every_page_to_sphinx(tmp_path):
    site = _site(tmp_path)
    newer = _Builder(site, newest_template=os.path.getmtime(site / "a.html") + 10)
    assert unchanged_pages.unchanged_pages(newer, "ac", PUBLISHED, NOW.__getitem__) == set()
    other = _Builder(site)
    other.build_info = _info("other")
    assert unchanged_pages.unchanged_pages(other, "ac", PUBLISHED, NOW.__getitem__) == set()
    (site / ".buildinfo").unlink()
    assert (
        unchanged_pages.unchanged_pages(_Builder(site), "ac", PUBLISHED, NOW.__getitem__) == set()
    )
