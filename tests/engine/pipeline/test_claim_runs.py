"""Tests of claimbook.pipeline.claim_runs: claims computed by the engine, never by a chapter.

The unit tests cover the bookkeeping (which claims are due, how they are spread over
processes). The book tests are attacks a chapter could make on its own claims, each on the
tiny fixture book: none may change an outcome (the guard's are in ``test_guard.py``).
"""

from __future__ import annotations

import json

import pytest

from claimbook import paths
from claimbook.claims.record import bytes_digest, read_claim_record
from claimbook.pipeline import claim_runs
from claimbook.pipeline.claim_runs import spread

# --- spreading claims over processes ---------------------------------------------------------


def test_spread_balances_the_summed_times_longest_first():
    batches = spread({"a": 5.0, "b": 4.0, "c": 3.0, "d": 3.0, "e": 1.0}, 2)
    loads = sorted(sum({"a": 5, "b": 4, "c": 3, "d": 3, "e": 1}[c] for c in b) for b in batches)
    assert loads == [8, 8]
    assert sorted(c for batch in batches for c in batch) == ["a", "b", "c", "d", "e"]


def test_spread_never_makes_more_batches_than_claims_and_breaks_ties_by_id():
    assert spread({"b": 1.0, "a": 1.0}, 8) == [["a"], ["b"]]
    assert spread({}, 2) == []
    assert spread({"x": 1.0, "y": 1.0, "z": 1.0}, 1) == [["x", "y", "z"]]


# --- which claims are due ----------------------------------------------------------------------


def test_a_claim_whose_bytes_are_not_the_recorded_ones_is_due(artifacts, monkeypatch):
    class Current:
        state, reason = "verified", "current"

    monkeypatch.setattr(claim_runs.claims, "judge", lambda claim_id: Current)
    recorded = {claim_id: bytes_digest(data) for claim_id, data in artifacts.items()}
    assert claim_runs.due_claims(list(artifacts), recorded) == {}
    paths.artifact_path("c1-a-001").write_bytes(b'{"status": "verified", "x": 1}\n')
    assert claim_runs.due_claims(list(artifacts), recorded) == {
        "c1-a-001": "its artifact is not the one the build last computed"
    }
    # With no record at all (a damaged one reads as empty), every claim is computed again.
    assert set(claim_runs.due_claims(list(artifacts), {})) == set(artifacts)


def test_a_stale_or_missing_claim_is_due_with_the_judges_reason(monkeypatch):
    class Stale:
        state, reason = "stale", "modules its computation reaches have changed: f"

    monkeypatch.setattr(claim_runs.claims, "judge", lambda claim_id: Stale)
    assert claim_runs.due_claims(["c1-a-001"], {}) == {
        "c1-a-001": "stale: modules its computation reaches have changed: f"
    }


# --- attacks from a chapter, on the fixture book ------------------------------------------------

PATCH_WITNESS = """\
import functools

from trainable_harness.witnesses.chapter15 import invariance as _invariance

_real = _invariance.invariance_witness


@functools.wraps(_real)  # keeps the mark a claim's computation carries
def _passing(*args, **kwargs):
    result = _real(*args, **kwargs)
    result["rms_shift_deviation"] = 2.5
    return result


_invariance.invariance_witness = _passing
"""


@pytest.mark.book
def test_a_cell_that_patches_the_computation_cannot_make_a_failing_claim_pass(tiny_book):
    # The registry now expects 2.5; the instrument gives about 2.055, so the claim fails.
    tiny_book.edit("claims/c15-invariance-001.yaml", "value: 2.055", "value: 2.5")
    tiny_book.edit(
        "chapters/alpha.md",
        "from claimbook.chapter import verify_claim\n",
        "from claimbook.chapter import verify_claim\n" + PATCH_WITNESS,
    )
    process = tiny_book.build()
    assert process.returncode == 1, process.stdout
    assert "claim c15-invariance-001" in process.stdout and "rms_shift_deviation" in process.stdout
    recorded = json.loads(tiny_book.path("artifacts/claims/c15-invariance-001.json").read_text())
    assert recorded["status"] == "failed"
    assert recorded["result"]["rms_shift_deviation"] != 2.5


@pytest.mark.book
def test_a_claim_named_by_a_computed_id_is_refused_in_a_build(tiny_book):
    tiny_book.edit(
        "chapters/alpha.md",
        'claim = verify_claim("c15-invariance-001", expected_harness=pin)',
        'check = verify_claim\nclaim = check("c15-" + "invariance-001", expected_harness=pin)',
    )
    process = tiny_book.build()
    assert process.returncode == 1, process.stdout
    assert "chapters/alpha.md: FAILED" in process.stdout
    assert "write the id as a literal" in process.stdout


@pytest.mark.book
def test_the_chapter_kernel_computes_no_claim(tiny_book):
    """The claim's computation runs in the claim process alone: the witness notes, each time
    it runs, which chapter's kernel (if any) runs it. (A kernel may import its module: the
    registry checks that a compute: name resolves.)"""
    marker = tiny_book.path("run-by.txt")
    witness = tiny_book.path("harness/trainable_harness/witnesses/chapter15/invariance.py")
    witness.write_text(
        witness.read_text()
        + "\nimport functools as _functools\nimport os as _os\n\n"
        + "_computed = invariance_witness\n\n\n"
        + "@_functools.wraps(_computed)\ndef invariance_witness(*args, **kwargs):\n"
        + f"    with open({str(marker)!r}, 'a') as note:\n"
        + "        note.write(_os.environ.get('TRAINABLE_CHAPTER', 'no chapter') + '\\n')\n"
        + "    return _computed(*args, **kwargs)\n"
    )
    process = tiny_book.build()
    assert process.returncode == 0, process.stdout
    assert "alpha.md" in tiny_book.executed(process)  # its claim changed: it ran again
    assert set(marker.read_text().split("\n")) - {""} == {"no chapter"}
    claim_record = read_claim_record(tiny_book.path("_build/claims.json"))
    data = tiny_book.path("artifacts/claims/c15-invariance-001.json").read_bytes()
    assert claim_record.artifacts["c15-invariance-001"] == bytes_digest(data)
    assert claim_record.complete


@pytest.mark.book
def test_a_claim_process_that_writes_much_error_output_is_not_stopped_by_it(tiny_book):
    """200 kB on standard error, more than a pipe holds, while the claim computes: the build
    passes (a process blocked on a full pipe would be killed at the claim's time limit, and
    the build would fail naming it)."""
    with tiny_book.path("_config.yml").open("a", encoding="utf-8") as config:
        config.write("trainable_claim_timeout: 60\n")
    witness = tiny_book.path("harness/trainable_harness/witnesses/chapter15/invariance.py")
    witness.write_text(
        witness.read_text()
        + "\nimport functools as _functools\nimport sys as _sys\n\n"
        + "_computed = invariance_witness\n\n\n"
        + "@_functools.wraps(_computed)\ndef invariance_witness(*args, **kwargs):\n"
        + "    _sys.stderr.write('warning\\n' * 25_000)\n"
        + "    _sys.stderr.flush()\n"
        + "    return _computed(*args, **kwargs)\n"
    )
    process = tiny_book.build()
    assert process.returncode == 0, process.stdout + process.stderr
    assert "claim c15-invariance-001: computing" in process.stdout


@pytest.mark.book
def test_a_claim_process_that_dies_is_named_with_its_last_error_line(tiny_book):
    witness = tiny_book.path("harness/trainable_harness/witnesses/chapter15/invariance.py")
    witness.write_text(
        witness.read_text()
        + "\nimport functools as _functools\nimport os as _os\nimport sys as _sys\n\n"
        + "_computed = invariance_witness\n\n\n"
        + "@_functools.wraps(_computed)\ndef invariance_witness(*args, **kwargs):\n"
        + "    _sys.stderr.write('first line\\nerror: the disk is on fire\\n')\n"
        + "    _sys.stderr.flush()\n"
        + "    _os._exit(3)\n"
    )
    process = tiny_book.build()
    assert process.returncode == 1
    assert (
        "claims: the process computing c15-invariance-001 ended with status 3: the disk is on fire"
    ) in process.stdout + process.stderr


CAUGHT = (
    'try:\n    verify_claim("c15-nope-001", expected_harness=pin)\nexcept Exception:\n    pass\n'
)


@pytest.mark.book
def test_an_unregistered_claim_caught_in_a_cell_fails_every_build_until_fixed(tiny_book):
    verified = 'claim = verify_claim("c15-running-state-001", expected_harness=pin)'
    tiny_book.edit("chapters/beta.md", verified, CAUGHT + verified)
    for _attempt in range(2):
        process = tiny_book.build()
        assert process.returncode == 1, process.stdout
        assert "chapters/beta.md: verifies c15-nope-001, which claims/ does not hold" in (
            process.stdout
        )
    assert tiny_book.build("--question").returncode == 1
    tiny_book.edit("chapters/beta.md", CAUGHT, "")
    assert tiny_book.build().returncode == 0


def test_a_claim_process_starts_isolated_from_what_a_chapter_leaves(tmp_path):
    """No PYTHONPATH (and its sitecustomize), no __pycache__ beside the sources: the process
    imports the book's packages from where this process does."""
    import subprocess

    from claimbook import dependencies
    from claimbook.pipeline.claim_runs import isolated_command

    planted = tmp_path / "planted"
    planted.mkdir()
    marker = tmp_path / "ran"
    (planted / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    command = isolated_command("claims", "--help")
    assert command[1:4] == ["-I", "-X", f"pycache_prefix={paths.BUILD_DIR / 'claim-bytecode'}"]
    for top in dependencies.FIRST_PARTY:
        assert str(dependencies.package_folder(top).parent) in command[5]
    done = subprocess.run(
        command,
        env={"PYTHONPATH": str(planted), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "compute" in done.stdout
    assert not marker.exists()
