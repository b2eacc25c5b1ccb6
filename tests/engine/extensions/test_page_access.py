"""The theme stack's HTML mended for axe-core (`claimbook.extensions.page_access`)."""

import pytest

from claimbook.extensions.page_access import mend

pytestmark = pytest.mark.unit

BIBLIOGRAPHY = (
    '<div role="list" class="citation-list">\n'
    '<div class="citation" id="id45" role="doc-biblioentry">\n'
    '<span class="label"><a role="doc-backlink" href="#id9">Arora et al., 2019</a></span>\n'
    "</div>\n"
    '<div class="citation" id="id31" role="doc-biblioentry"></div>\n'
    "</div>"
)


def test_bibliography_entries_become_list_items():
    mended = mend(BIBLIOGRAPHY)
    assert "doc-biblioentry" not in mended
    assert mended.count('role="listitem"') == 2
    assert 'role="doc-backlink"' in mended  # inside an entry, where it is allowed


def test_a_hidden_cell_toggle_is_named_by_its_visible_words():
    toggle = (
        '<summary aria-label="Toggle hidden content">\n'
        '<p class="collapsed admonition-title">Show code cell content</p>\n</summary>'
    )
    mended = mend(toggle)
    assert mended.startswith("<summary>\n") and "aria-label" not in mended
    assert "Show code cell content" in mended


def test_every_table_container_is_a_focusable_labelled_region():
    body = '<div class="pst-scrollable-table-container"><table></table></div>' * 3
    mended = mend(body)
    assert mended.count('tabindex="0" role="region"') == 3
    labels = [f'aria-label="Table {k}, scrolls sideways"' for k in (1, 2, 3)]
    assert all(label in mended for label in labels)


def test_a_page_without_these_is_unchanged():
    body = '<p>A <a href="#x">link</a> and <summary>Proof</summary></p>'
    assert mend(body) == body
