"""claimbook.extensions.claim_search: what of a claim page is indexed (the pages as built,
and their search entries, are the book tier's: tests/engine/extensions/test_claims.py)."""

from __future__ import annotations

from docutils import nodes

from claimbook.extensions import claim_search


def _section(ident: str, *children) -> nodes.section:
    part = nodes.section(ids=[ident])
    part += nodes.title(text=ident)
    for child in children:
        part += child
    return part


def _page() -> nodes.container:
    body = nodes.container()
    body += nodes.paragraph(text="What the claim says.")
    body += _section(
        "fields",
        nodes.paragraph(text="A field."),
        _section("re-verify", nodes.literal_block(text='{"x": 1}')),  # nested, not searched
    )
    for ident in sorted(claim_search.NOT_SEARCHED):
        body += _section(ident, nodes.paragraph(text=f"the {ident} part"))
    # The collapsed details are a container, not a section: left out all the same.
    body += nodes.container("", nodes.paragraph(text="the digests part"), ids=["details"])
    body += _section("reasons", nodes.paragraph(text="Why."))
    return body


def _removed_in_place(body: nodes.Node) -> nodes.Node:
    """The searched part as a whole copy with the other sections removed from it."""
    copy = body.deepcopy()
    for part in list(copy.findall(nodes.Element)):
        if set(part["ids"]) & claim_search.NOT_SEARCHED and part.parent is not None:
            part.parent.remove(part)
    return copy


def test_the_searched_copy_is_the_page_without_the_parts_not_searched():
    body = _page()
    searched = claim_search.searched_copy(body)
    assert searched.pformat() == _removed_in_place(body).pformat()
    text = searched.astext()
    assert "A field." in text and "Why." in text and "What the claim says." in text
    assert not any(f"the {ident} part" in text for ident in claim_search.NOT_SEARCHED)
    assert '{"x": 1}' not in text and "the digests part" not in text


def test_the_page_itself_is_left_whole():
    body = _page()
    before = body.pformat()
    claim_search.searched_copy(body)
    assert body.pformat() == before
