"""checks.matrix: the CI workflow's jobs run locally (``python -m checks matrix``, ``make
matrix-check``) against a one-machine build, and the workflow they mirror.

The workflow's commands are the check's (:data:`checks.matrix.COMMANDS`); the first test keeps
the two in step. The engine commands the jobs run (``outputs``, ``render`` alone) are tested in
tests/engine/pipeline/test_spread_build.py.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from checks.matrix import COMMANDS, compare_sites, critical_path
from claimbook import paths

WORKFLOW = paths.REPO_ROOT / ".github" / "workflows" / "book.yml"


def test_the_workflow_runs_the_commands_the_local_check_runs():
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    jobs = workflow["jobs"]
    runs = "\n".join(step.get("run", "") for job in jobs.values() for step in job.get("steps", []))
    for command in COMMANDS.values():
        words = " ".join('"$CHAPTER"' if word == "{chapter}" else word for word in command)
        assert f".venv/bin/python -m claimbook {words}" in runs
    # One job per chapter, the list derived from the repository by the first job.
    matrix = jobs["chapter"]["strategy"]["matrix"]["chapter"]
    assert matrix == "${{ fromJSON(needs.chapters.outputs.chapters) }}"
    assert jobs["chapter"]["needs"] == ["chapters", "claims"]
    assert jobs["render"]["needs"] == ["claims", "chapter", "mutate"]


def test_the_render_job_takes_the_claim_artifacts_from_the_claims_job_alone():
    """The trust boundary: the artifacts the badges are judged from come from a job that runs
    no chapter code, replace whatever the chapter jobs uploaded, and are checked against the
    digest that job computed, before the render."""
    jobs = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]
    claims_runs = [s["run"] for s in jobs["claims"]["steps"] if "run" in s]
    assert not any("execute" in run or "make\n" in run for run in claims_runs)
    assert ".venv/bin/python -m claimbook claims verify" in claims_runs
    render = jobs["render"]["steps"]
    chapters = next(i for i, s in enumerate(render) if s.get("with", {}).get("pattern"))
    removed = next(i for i, s in enumerate(render) if "rm -f artifacts/claims" in s.get("run", ""))
    claims = next(i for i, s in enumerate(render) if s.get("with", {}).get("name") == "claims")
    checked = next(i for i, s in enumerate(render) if "EXPECTED" in s.get("env", {}))
    rendering = next(i for i, s in enumerate(render) if "claimbook render" in s.get("run", ""))
    assert chapters < removed < claims < checked < rendering
    assert render[checked]["env"]["EXPECTED"] == "${{ needs.claims.outputs.digest }}"


def test_the_mutate_job_checks_the_committed_record_the_render_reads():
    """The published claim pages say what each claim catches from the committed record
    (claims/mistakes/record.json); the mutate job recomputes it and fails when it
    disagrees, and the render waits for that job."""
    jobs = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]
    mutate = jobs["mutate"]["steps"]
    assert [s["run"] for s in mutate if "run" in s][-1] == (
        ".venv/bin/python -m checks mutate --check"
    )
    assert "mutate" in jobs["render"]["needs"]
    assert not any("mutations" in str(s.get("with", {})) for s in jobs["render"]["steps"])


def test_compare_sites_lists_every_difference(tmp_path):
    left, right = tmp_path / "left", tmp_path / "right"
    for site in (left, right):
        (site / "sub").mkdir(parents=True)
        (site / "same.html").write_text("same")
    (left / "sub" / "page.html").write_text("one")
    (right / "sub" / "page.html").write_text("two")
    (left / "only-left.html").write_text("")
    (right / ".buildinfo").write_text("")
    files, differences = compare_sites(left, right)
    assert files == 3
    assert differences == [
        "only-left.html: only in the assembled site",
        ".buildinfo: only in the one-machine site",
        "sub/page.html: differs",
    ]


def test_the_critical_path_is_the_slowest_chapter_job_plus_the_render():
    seconds = {"chapter-a": 12.0, "chapter-b": 30.5, "render": 9.0, "one-machine": 52.0}
    assert critical_path(seconds) == {
        "slowest_chapter_job": "chapter-b",
        "slowest_chapter_seconds": 30.5,
        "render_seconds": 9.0,
        "critical_path_seconds": 39.5,
        "one_machine_seconds": 52.0,
    }
    assert "one_machine_seconds" not in critical_path({"chapter-a": 1.0, "render": 2.0})
    with pytest.raises(ValueError, match="render job"):
        critical_path({"chapter-a": 1.0})


@pytest.mark.book
def test_the_matrix_assembles_the_site_a_one_machine_build_renders(
    unbuilt_tiny_book, built_tiny_book, tmp_path
):
    # The one-machine site is the session's build of the same fixture book (the driver's
    # `build`, as the check's own one-machine job runs it), not a second build of it.
    # Run as `make matrix-check` runs it: `python -m checks` from the repository's root.
    work = tmp_path / "work"
    reference = built_tiny_book.path("_build/html")
    arguments = ["--root", str(unbuilt_tiny_book.root), "--work", str(work)]
    process = subprocess.run(
        [sys.executable, "-m", "checks", "matrix", *arguments, "--reference", str(reference)],
        cwd=paths.REPO_ROOT,
        env=unbuilt_tiny_book.environment(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert process.returncode == 0, process.stdout + process.stderr
    assert "the assembled site and the one-machine site are byte-identical" in process.stdout
    # Each job uploaded its own chapter's files and nothing else.
    uploaded = {
        chapter: sorted(
            path.relative_to(work / "uploads" / chapter).as_posix()
            for path in (work / "uploads" / chapter).rglob("*")
            if path.is_file()
        )
        for chapter in ("alpha", "beta")
    }
    for chapter, other in (("alpha", "beta"), ("beta", "alpha")):
        record_file = work / f"chapter-{chapter}" / "_build" / "keys" / f"{chapter}.json"
        record = json.loads(record_file.read_text(encoding="utf-8"))
        assert uploaded[chapter] == sorted([*record["outputs"], f"_build/keys/{chapter}.json"])
        assert f"chapters/{other}.ipynb" not in uploaded[chapter]
    # The render job executed nothing: every chapter's record is the one its job wrote.
    for chapter in ("alpha", "beta"):
        assert (work / "render" / "_build" / "keys" / f"{chapter}.json").read_bytes() == (
            work / "uploads" / chapter / "_build" / "keys" / f"{chapter}.json"
        ).read_bytes()
