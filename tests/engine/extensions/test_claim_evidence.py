"""claimbook.extensions.claim_evidence: where a section's Evidence block goes."""

from docutils import nodes

from claimbook.extensions.claim_evidence import _evidence_place


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
