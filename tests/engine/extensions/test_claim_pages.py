"""claimbook.extensions.claim_pages: a record published only when it is a regular file;
``claims.json``, sorted and naming every state; what of a claim page is indexed (the pages as
built, and their search entries, are the book tier's: tests/engine/extensions/test_claims.py)."""

import json
import os

from claimtools import PLACE, TOY_ID, verify_toy
from docutils import nodes

from claimbook.claims import artifact_path, judge, load_claim
from claimbook.extensions import claim_pages
from claimbook.extensions import claim_pages_model as model
from claimbook.extensions.claim_pages import ledger_json, publishable_record


def described(registry, artifacts, stated_in=()) -> dict:
    claim = load_claim(TOY_ID, registry_dir=registry)
    judgement = judge(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)
    publishable = publishable_record(TOY_ID, artifacts) is not None
    return model.describe(claim, judgement, list(stated_in), publishable)


def test_claims_json_is_sorted_and_names_every_state(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    info = described(registry, artifacts, [PLACE])
    text = ledger_json([info])
    assert text.endswith("}\n") and text.index('"claims"') < text.index('"states"')
    data = json.loads(text)
    assert data["claims"] == [info]
    assert list(data["states"]) == sorted(model.STATE_MEANINGS)
    assert set(data["states"]) == set(model.STATE_CLASSES) == set(model.STATE_MARKS)
    assert list(json.loads(text.replace("\n", ""))["claims"][0]) == sorted(info)


# --- the record: published only when it is a regular file -------------------------------------


def test_a_symlinked_record_is_not_publishable(toy, registry, artifacts, tmp_path):
    verify_toy(registry, artifacts)
    path = artifact_path(TOY_ID, artifacts)
    assert publishable_record(TOY_ID, artifacts) == path.read_bytes()
    outside = tmp_path / "outside.json"
    outside.write_bytes(path.read_bytes())
    path.unlink()
    os.symlink(outside, path)
    assert publishable_record(TOY_ID, artifacts) is None
    assert described(registry, artifacts)["record"] is None


def test_a_record_in_a_symlinked_folder_is_not_publishable(toy, registry, artifacts, tmp_path):
    verify_toy(registry, artifacts)
    real = tmp_path / "real"
    artifacts.rename(real)
    artifacts.symlink_to(real, target_is_directory=True)
    assert artifact_path(TOY_ID, artifacts).is_file()
    assert publishable_record(TOY_ID, artifacts) is None


def test_no_record_without_an_artifact(registry, artifacts):
    assert publishable_record(TOY_ID, artifacts) is None


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
    for ident in sorted(claim_pages.NOT_SEARCHED):
        body += _section(ident, nodes.paragraph(text=f"the {ident} part"))
    # The collapsed details are a container, not a section: left out all the same.
    body += nodes.container("", nodes.paragraph(text="the digests part"), ids=["details"])
    body += _section("reasons", nodes.paragraph(text="Why."))
    return body


def _removed_in_place(body: nodes.Node) -> nodes.Node:
    """The searched part as a whole copy with the other sections removed from it."""
    copy = body.deepcopy()
    for part in list(copy.findall(nodes.Element)):
        if set(part["ids"]) & claim_pages.NOT_SEARCHED and part.parent is not None:
            part.parent.remove(part)
    return copy


def test_the_searched_copy_is_the_page_without_the_parts_not_searched():
    body = _page()
    searched = claim_pages.searched_copy(body)
    assert searched.pformat() == _removed_in_place(body).pformat()
    text = searched.astext()
    assert "A field." in text and "Why." in text and "What the claim says." in text
    assert not any(f"the {ident} part" in text for ident in claim_pages.NOT_SEARCHED)
    assert '{"x": 1}' not in text and "the digests part" not in text


def test_the_page_itself_is_left_whole():
    body = _page()
    before = body.pformat()
    claim_pages.searched_copy(body)
    assert body.pformat() == before
