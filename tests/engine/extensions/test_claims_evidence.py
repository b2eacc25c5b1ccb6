"""claimbook.extensions.claims: where a section's Evidence block goes, and what it is."""

from docutils import nodes

from claimbook.extensions.claims import _evidence_place, evidence_block


def test_evidence_goes_to_the_end_of_the_section_or_before_a_pages_first_subsection():
    page = nodes.section()
    opening, later = nodes.paragraph(), nodes.paragraph()
    sub = nodes.section("", nodes.title("", "Sub"), later)
    page += [nodes.title("", "Page"), opening, sub]
    assert _evidence_place(opening) == (page, True)
    assert _evidence_place(later) == (sub, False)
    flat = nodes.section("", nodes.title("", "Flat"), nodes.paragraph())
    assert _evidence_place(flat[1]) == (flat, False)
    assert _evidence_place(nodes.paragraph()) == (None, False)


def test_a_sections_evidence_is_one_collapsed_block_counting_its_claims():
    cards = [nodes.container("", nodes.paragraph("", f"card {k}")) for k in range(2)]
    opening, body, closing = evidence_block(cards)
    assert opening["format"] == "html" and opening.astext().startswith(
        '<details class="claim-evidence">'
    )
    assert "<summary>Evidence" in opening.astext() and "(2 claims)" in opening.astext()
    assert list(body.children) == cards and closing.astext().strip() == "</details>"
    assert "(1 claim)" in evidence_block(cards[:1])[0].astext()
