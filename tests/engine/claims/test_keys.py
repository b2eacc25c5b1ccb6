"""Claim keys: the registry entry, the modules the computation reaches (whole), the lock."""

import shutil

import pytest
from claimtools import TOY_ID, verify_toy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claimbook import dependencies
from claimbook.claims import judge, load_claim
from claimbook.claims.keys import CLAIM_RUNNER, claim_key, claim_modules, environment_digest


@pytest.fixture
def harness_copy(tmp_path, monkeypatch):
    """A copy of the science package whose files the keys read (the code that runs is the
    installed one, so a judgement sees only what the keys see)."""
    copy = tmp_path / "harness-copy" / "trainable_harness"
    original = dependencies.package_folder("trainable_harness")
    shutil.copytree(original, copy, ignore=shutil.ignore_patterns("__pycache__"))
    engine = dependencies.package_folder("claimbook")
    folders = {"trainable_harness": copy, "claimbook": engine}
    monkeypatch.setattr(dependencies, "package_folder", folders.get)
    return copy


def test_environment_digest_follows_the_lock(tmp_path):
    unlocked = environment_digest(tmp_path)  # no lock: the Python and numpy versions
    (tmp_path / "requirements.txt").write_text("numpy==2.4.6\n")
    locked = environment_digest(tmp_path)
    (tmp_path / "requirements.txt").write_text("numpy==2.4.7\n")
    assert len({unlocked, locked, environment_digest(tmp_path)}) == 3


def test_claim_key_covers_registry_environment_and_modules(registry):
    claim = load_claim(TOY_ID, registry_dir=registry)
    key = claim_key(claim)
    assert set(key) == {"digest", "registry_digest", "environment_digest", "modules"}
    assert key["registry_digest"] == claim.registry_digest
    assert "trainable_harness.normalization" in key["modules"]
    assert CLAIM_RUNNER in key["modules"]


def test_a_real_claim_reaches_its_witness_and_not_the_site_machinery():
    modules = claim_modules(load_claim("c15-invariance-001"))
    assert "trainable_harness.witnesses.chapter15.invariance" in modules
    assert "trainable_harness.normalization" in modules
    assert not any(name.startswith("claimbook.extensions") for name in modules)
    assert "claimbook.claims.cli" not in modules


def _append(path, text):
    path.write_text(path.read_text() + text)


# Edits a careless author makes that a key reading only plain assignments would miss.
EDITS = [
    "\nRANK_TOLERANCE += 5.0\n",
    "\nif True:\n    EPSILON = 0.5\n",
    "\ntry:\n    import math as _m\nexcept ImportError:\n    pass\n",
    "\n@staticmethod\ndef _decorated():\n    return 1\n",
    "\n# a comment is an edit too\n",
]


@pytest.mark.parametrize("edit", EDITS)
def test_any_edit_of_a_module_the_claim_reaches_makes_it_stale_and_its_revert_current(
    toy, registry, artifacts, harness_copy, edit
):
    verify_toy(registry, artifacts)
    module = harness_copy / "normalization.py"
    before = module.read_bytes()
    _append(module, edit)
    state, _, reason = judge(TOY_ID, registry_dir=registry, artifacts_dir=artifacts)
    assert state == "stale" and "trainable_harness.normalization" in reason
    module.write_bytes(before)  # reverted: current again, nothing to clean
    assert judge(TOY_ID, registry_dir=registry, artifacts_dir=artifacts).state == "verified"


def test_an_edit_of_a_module_the_claim_does_not_reach_keeps_it_current(
    toy, registry, artifacts, harness_copy
):
    verify_toy(registry, artifacts)
    reached = set(claim_key(load_claim(TOY_ID, registry_dir=registry))["modules"])
    assert "trainable_harness.mlp.sweeps" not in reached
    _append(harness_copy / "mlp" / "sweeps.py", "\nBUDGET += 1\n")
    assert judge(TOY_ID, registry_dir=registry, artifacts_dir=artifacts).state == "verified"


def _science_modules():
    root = dependencies.package_folder("trainable_harness")
    return sorted(
        "trainable_harness." + path.relative_to(root).with_suffix("").as_posix().replace("/", ".")
        for path in root.rglob("*.py")
        if path.name != "__init__.py"
    )


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    module=st.sampled_from(_science_modules()),
    edit=st.sampled_from(EDITS) | st.text(min_size=1, max_size=20).map(lambda t: f"\n# {t!r}\n"),
)
def test_a_random_edit_of_a_science_module_changes_the_key_exactly_when_reached(
    harness_copy, module, edit
):
    claim = load_claim("c16-small-batch-001")
    stored = claim_key(claim)
    path = harness_copy.joinpath(*module.split(".")[1:]).with_suffix(".py")
    before = path.read_bytes()
    _append(path, edit)
    try:
        from claimbook.claims.keys import current_claim_key

        changed = current_claim_key(claim, {"key": stored})["digest"] != stored["digest"]
        assert changed == (module in stored["modules"])
    finally:
        path.write_bytes(before)


def test_the_static_reach_covers_every_module_a_computation_imports():
    # Run a real claim in a fresh interpreter and list the book's modules it imported: each
    # must be in the claim's key, or an edit of it would go unseen.
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from claimbook.claims.registry import run_computation\n"
        "from claimbook.claims.registry import load_claim\n"
        "run_computation(load_claim('c15-running-state-001'))\n"
        "print('\\n'.join(m for m in sys.modules if m.split('.')[0] in "
        "('trainable_harness', 'claimbook')))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    imported = set(done.stdout.split())
    assert imported - set(claim_modules(load_claim("c15-running-state-001"))) == set()
