"""The command line: one line per claim, exit statuses, one-line filesystem errors."""

import os
import subprocess
import sys
from pathlib import Path

from claimtools import TOY_ID, edit_artifact, make_chapters

from claimbook.__main__ import main
from claimbook.claims import claim_seed
from trainable_harness import __version__


def run_cli(capsys, registry, artifacts, *arguments):
    status = main(["--registry", str(registry), "--artifacts", str(artifacts), *arguments])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_cli_verify_prints_one_line_per_claim(toy, registry, artifacts, capsys):
    status, out, _ = run_cli(capsys, registry, artifacts, "claims", "verify")
    assert (status, out) == (0, f"{TOY_ID}: verified\n")


def test_cli_verify_fails_on_a_failing_claim(toy, registry, artifacts, capsys):
    toy.result = {**toy.result, "count": 4}
    status, out, _ = run_cli(capsys, registry, artifacts, "claims", "verify", TOY_ID)
    assert status == 1
    assert out.startswith(f"{TOY_ID}: failed") and "count: expected 3, got 4" in out


def test_cli_verify_reports_refuted(fixture_registry, artifacts, capsys):
    status, out, _ = run_cli(
        capsys, fixture_registry.directory, artifacts, "claims", "verify", "t01-shift-001"
    )
    assert (status, out) == (0, "t01-shift-001: refuted\n")


def test_cli_check_artifacts_reports_tampering(toy, registry, artifacts, capsys):
    run_cli(capsys, registry, artifacts, "claims", "verify")
    status, out, _ = run_cli(capsys, registry, artifacts, "claims", "verify", "--check-artifacts")
    assert (status, out) == (0, f"{TOY_ID}: artifact matches a fresh recomputation\n")
    edit_artifact(artifacts, lambda a: a["result"].update(ratio=0.5 + 1e-13))
    status, out, _ = run_cli(capsys, registry, artifacts, "claims", "verify", "--check-artifacts")
    assert status == 1 and "TamperedArtifactError" in out and "result.ratio" in out


def test_cli_unknown_id_exits_2_before_computing(toy, registry, artifacts, capsys):
    status, out, err = run_cli(capsys, registry, artifacts, "claims", "verify", TOY_ID, "t01-x")
    assert status == 2 and out == "" and "unknown claim id 't01-x'" in err
    assert toy.seeds == []


def test_cli_list_and_show(toy, registry, artifacts, capsys):
    status, out, _ = run_cli(capsys, registry, artifacts, "claims", "list")
    assert status == 0 and out.startswith(f"{TOY_ID}  [not run]  chapter 1: A toy witness")
    run_cli(capsys, registry, artifacts, "claims", "verify")
    status, out, _ = run_cli(capsys, registry, artifacts, "claims", "show", TOY_ID)
    assert status == 0
    assert "compute: trainable_harness.witnesses.toy.toy_witness" in out
    assert f'# seed: claim_seed("toy-seed") = {claim_seed("toy-seed")}' in out
    assert "# state: verified" in out


def test_cli_repin(toy, registry, artifacts, tmp_path, capsys):
    chapters = make_chapters(tmp_path)
    status, out, _ = run_cli(capsys, registry, artifacts, "repin", "--chapters", str(chapters))
    assert status == 0
    assert f"pin 0.1.0+f5d27deff4da -> {__version__}" in out
    assert f"{TOY_ID}: verified (no previous artifact to compare)" in out
    # the claims are reported before any chapter is touched
    assert out.index(TOY_ID) < out.index("15-pinned.md")
    status, out, _ = run_cli(capsys, registry, artifacts, "repin", "--chapters", str(chapters))
    assert "already pinned" in out and f"{TOY_ID}: verified; result unchanged" in out


def test_cli_repin_with_a_failing_claim_exits_1_and_says_nothing_was_repinned(
    toy, registry, artifacts, tmp_path, capsys
):
    chapters = make_chapters(tmp_path)
    toy.result = {**toy.result, "count": 4}
    status, out, _ = run_cli(capsys, registry, artifacts, "repin", "--chapters", str(chapters))
    assert status == 1 and "no chapter was re-pinned" in out
    assert "0.1.0+f5d27deff4da" in (chapters / "15-pinned.md").read_text()


def test_cli_unwritable_artifacts_directory_is_one_line(toy, registry, tmp_path, capsys):
    # A file where the artifacts directory should be: mkdir fails even for root.
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    status, _out, err = run_cli(capsys, registry, blocker / "claims", "claims", "verify")
    assert status == 2 and err.count("\n") == 1 and err.startswith("error: ")
    assert "Traceback" not in err


def test_cli_directory_where_an_artifact_should_be_is_one_line(toy, registry, artifacts, capsys):
    (artifacts / f"{TOY_ID}.json").mkdir(parents=True)
    status, _out, err = run_cli(capsys, registry, artifacts, "claims", "verify")
    assert status == 2 and err.count("\n") == 1 and err.startswith("error: ")
    assert f"{TOY_ID}.json" in err


def test_cli_as_a_module_from_another_directory(tmp_path):
    environment = {k: v for k, v in os.environ.items() if k != "TRAINABLE_ROOT"}
    completed = subprocess.run(
        [sys.executable, "-m", "claimbook", "claims", "list"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "c15-invariance-001  [" in completed.stdout
    assert Path(tmp_path).is_dir() and list(tmp_path.iterdir()) == []


def test_cli_permission_denied_is_one_line(toy, registry, artifacts, capsys, monkeypatch):
    # As root a read-only directory is still writable, so deny the write where it happens.
    from claimbook import atomic

    def denied(*arguments, **options):
        raise PermissionError(13, "Permission denied", str(artifacts))

    monkeypatch.setattr(atomic.tempfile, "mkstemp", denied)
    status, _out, err = run_cli(capsys, registry, artifacts, "claims", "verify")
    # The file being written is named, not the temporary file beside it, with what to do.
    assert (status, err) == (
        2,
        f"error: computing claims: {artifacts}/{TOY_ID}.json: Permission denied "
        "(permission denied: make the file and its folder writable (chmod))\n",
    )
