"""claimbook.extensions.claim_nodes: where each claim is stated, labelled as the book numbers
it, and a page with a claim warning read again by every build."""

from types import SimpleNamespace

from docutils import nodes

from claimbook.extensions import claim_nodes


def _environment():
    """Chapter 15 ("chapters/inv", with a later page "chapters/inv-ex") as Sphinx keeps it."""
    return SimpleNamespace(
        domaindata={},
        docname="chapters/inv",
        titles={
            "chapters/inv": nodes.title("", "Invariance"),
            "chapters/inv-ex": nodes.title("", "Exercises"),
        },
        toc_secnumbers={
            "chapters/inv": {"": (15,), "#scale": (15, 1)},
            "chapters/inv-ex": {"": (15, 4)},
        },
        trainable_chapter_pages={"chapters/inv": [("chapters/inv-ex", 10)]},
        serial=0,
        new_serialno=lambda category: 7,
    )


def _page(env, docname, *statements):
    """A read page whose sections state claims: (section id, title, claim, kind) each."""
    document = nodes.document(None, None)
    for section_id, title, claim_id, kind in statements:
        section = nodes.section(ids=[section_id] if section_id else [])
        section += nodes.title("", title)
        node = nodes.inline(ids=[])
        claim_nodes.mark_statement(node, env, claim_id, kind)
        section += nodes.paragraph("", "", node)
        document += section
    env.docname = docname
    claim_nodes._collect_places(SimpleNamespace(env=env), document)


def test_a_marked_statement_gets_an_anchor_and_names_its_claim():
    node = nodes.inline(ids=[])
    claim_nodes.mark_statement(node, _environment(), "c15-x-001", "line")
    assert node["ids"] == ["claim-c15-x-001-7"]
    assert node["trainable-claim"] == "c15-x-001" and node["trainable-claim-kind"] == "line"


def test_places_are_labelled_by_chapter_and_section_as_the_book_numbers_them():
    env = _environment()
    _page(
        env,
        "chapters/inv",
        ("invariance", "Invariance", "c15-a-001", "badge"),  # the opening, before 15.1
        ("scale", "Scale", "c15-a-001", "number"),
    )
    _page(env, "chapters/inv-ex", ("exercises", "Exercises", "c15-b-001", "line"))
    places = claim_nodes.stated_in(env)
    assert [(p["page"], p["chapter"], p["section"], p["as"]) for p in places["c15-a-001"]] == [
        ("chapters/inv.html", "15. Invariance", "15. Invariance", "badge"),
        ("chapters/inv.html", "15. Invariance", "15.1 Scale", "number"),
    ]
    # A chapter's later page belongs to the chapter; its first section is numbered as a page.
    (later,) = places["c15-b-001"]
    assert (later["chapter"], later["section"]) == ("15. Invariance", "15.4 Exercises")
    assert places["c15-a-001"][0]["anchor"] == "claim-c15-a-001-7"


def test_purge_and_merge_keep_the_places_of_the_pages_read():
    env, other = _environment(), _environment()
    _page(env, "chapters/inv", ("scale", "Scale", "c15-a-001", "badge"))
    _page(other, "chapters/inv-ex", ("exercises", "Exercises", "c15-b-001", "line"))
    claim_nodes._merge(None, env, ["chapters/inv-ex"], other)
    assert sorted(claim_nodes.stated_in(env)) == ["c15-a-001", "c15-b-001"]
    claim_nodes._purge(None, env, "chapters/inv")
    assert sorted(claim_nodes.stated_in(env)) == ["c15-b-001"]


def test_a_page_with_a_claim_warning_is_read_again_by_every_build(monkeypatch):
    said = []
    monkeypatch.setattr(
        claim_nodes,
        "logger",
        SimpleNamespace(warning=lambda message, location: said.append((message, location))),
    )
    env = SimpleNamespace(note_reread=lambda: said.append("read again"))
    claim_nodes.warn(env, ("chapters/inv", 12), "claim c15-a-001 failed")
    assert said == [("claim c15-a-001 failed", ("chapters/inv", 12)), "read again"]
