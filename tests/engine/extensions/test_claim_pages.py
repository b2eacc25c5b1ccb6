"""claimbook.extensions.claim_pages: a record published only when it is a regular file;
``claims.json``, sorted and naming every state; what of a claim page is indexed (the pages as
built, and their search entries, are the book tier's: tests/engine/extensions/test_claims.py)."""

import json
import os

from claimtools import PLACE, TOY_ID, verify_toy

from claimbook.claims import artifact_path, judge, load_claim
from claimbook.extensions import claim_pages_model as model
from claimbook.extensions.claim_pages import publishable_record


def described(registry, artifacts, stated_in=()) -> dict:
    claim = load_claim(TOY_ID, registry_dir=registry)
    judgement = judge(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)
    publishable = publishable_record(TOY_ID, artifacts) is not None
    return model.describe(claim, judgement, list(stated_in), publishable)


def test_claims_json_is_sorted_and_names_every_state(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    info = described(registry, artifacts, [PLACE])
    text = model.ledger_json([info])
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
