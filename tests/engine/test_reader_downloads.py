"""When the site's download button gets reader notebooks (extensions.chapter_pages)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from claimbook.extensions import chapter_pages


@pytest.fixture
def written(monkeypatch) -> list:
    calls = []
    monkeypatch.setattr(chapter_pages, "write_reader_notebooks", lambda *a, **k: calls.append(a))
    return calls


def _app(mode: str, kind: str = "html"):
    return SimpleNamespace(
        config=SimpleNamespace(nb_execution_mode=mode),
        builder=SimpleNamespace(format=kind),
        srcdir="/book",
        outdir="/book/_build/html",
    )


def test_the_driver_s_render_writes_them_from_its_executed_notebooks(written):
    chapter_pages._reader_downloads(_app("off"), None)
    assert written == [(Path("/book/chapters"), Path("/book/_build/html/_sources/chapters"))]


@pytest.mark.parametrize(
    ("mode", "kind", "error"),
    [
        ("force", "html", None),  # myst-nb executed the chapters: the benchmark's comparison
        ("off", "latex", None),
        ("off", "html", RuntimeError("the render failed")),
    ],
)
def test_none_without_the_driver_s_notebooks_an_html_site_or_a_finished_render(
    written, mode, kind, error
):
    chapter_pages._reader_downloads(_app(mode, kind), error)
    assert written == []
