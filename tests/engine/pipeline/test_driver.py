"""The build driver end to end on the tiny fixture book: what runs, what fails, what shows.

Which chapters executed is read from the driver's own progress lines ("<chapter>: executing
(<reason>)"), one per chapter it runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess

import pytest

from claimbook.pipeline.checkout import build_lock

# Each test builds a fixture book (kernels and Sphinx): the book tier.
pytestmark = pytest.mark.book


def test_an_unchanged_book_does_nothing_and_says_it_is_current(tiny_book):
    assert tiny_book.build("--question").returncode == 0
    process = tiny_book.build()
    assert process.returncode == 0, process.stdout
    assert tiny_book.executed(process) == []
    assert "site: unchanged" in process.stdout


def test_a_no_op_after_a_clean_build_is_answered_from_the_trees_digest(tiny_book):
    from claimbook.pipeline.noop import RECORD_NAME

    record = tiny_book.path(f"_build/{RECORD_NAME}")
    assert tiny_book.build().returncode == 0  # a copy at another root: the full path
    assert record.is_file()
    for arguments in ((), ("--question",)):
        process = tiny_book.build(*arguments)
        assert process.returncode == 0, process.stdout
        assert "executing" not in process.stdout and "site:" not in process.stdout
    assert "nothing changed since the last clean build" in tiny_book.build().stdout
    # A failing build leaves no record, whatever was there before it.
    tiny_book.edit("claims/c15-invariance-001.yaml", "value: 2.055", "value: 2.5")
    assert tiny_book.build().returncode == 1
    assert not record.exists()
    record.write_text("{}")  # nor does a record written meanwhile survive a failing build
    assert tiny_book.build().returncode == 1
    assert not record.exists()
    assert tiny_book.build("--question").returncode == 1


def test_an_unknown_claim_id_fails_every_build_until_fixed(tiny_book):
    tiny_book.edit("chapters/alpha.md", "{claim}`c15-invariance-001`", "{claim}`c15-nope-001`")
    first, second = tiny_book.build(), tiny_book.build()
    for process in (first, second):
        assert process.returncode == 1, process.stdout
        assert "c15-nope-001" in process.stdout
    assert tiny_book.executed(second) == []  # the failure is repeated, not recomputed
    assert tiny_book.build("--question").returncode == 1
    tiny_book.edit("chapters/alpha.md", "{claim}`c15-nope-001`", "{claim}`c15-invariance-001`")
    assert tiny_book.build().returncode == 0


def test_a_failing_claim_is_rendered_red_and_fails_with_its_numbers(tiny_book):
    tiny_book.edit("claims/c15-invariance-001.yaml", "value: 2.055", "value: 2.5")
    for attempt in range(2):
        process = tiny_book.build()
        assert process.returncode == 1, process.stdout
        assert "c15-invariance-001" in process.stdout
        assert "rms_shift_deviation" in process.stdout
        assert "2.5" in process.stdout and "2.05" in process.stdout
        if attempt == 0:
            assert tiny_book.executed(process) == ["alpha.md"]
    page = tiny_book.path("_build/html/chapters/alpha.html").read_text(encoding="utf-8")
    assert "claim-failed" in page
    assert "claim-verified" not in page
    executed_notebook = tiny_book.path("chapters/alpha.ipynb").read_text(encoding="utf-8")
    assert "verified" not in executed_notebook.split("claim c15-invariance-001:")[1][:20]


def test_a_prose_edit_reassembles_the_chapter_without_a_kernel(tiny_book):
    tiny_book.edit("chapters/beta.md", "The claim:", "A new sentence. The claim:")
    assert tiny_book.build("--question").returncode == 1
    process = tiny_book.build()
    assert process.returncode == 0, process.stdout
    assert tiny_book.executed(process) == []
    assert "chapters/beta.md: reassembled" in process.stdout
    page = tiny_book.path("_build/html/chapters/beta.html").read_text(encoding="utf-8")
    assert "A new sentence." in page
    assert "claim-verified" in page
    assert tiny_book.build("--question").returncode == 0


def test_a_code_edit_executes_the_chapter(tiny_book):
    tiny_book.edit("chapters/beta.md", "print(f", "print('edited')\nprint(f")
    process = tiny_book.build()
    assert tiny_book.executed(process) == ["beta.md"]
    assert "code changed" in process.stdout


def test_a_deleted_artifact_reexecutes_only_its_chapter(tiny_book):
    tiny_book.path("artifacts/claims/c15-running-state-001.json").unlink()
    assert tiny_book.build("--question").returncode == 1
    process = tiny_book.build()
    assert process.returncode == 0, process.stdout
    assert tiny_book.executed(process) == ["beta.md"]
    assert tiny_book.path("artifacts/claims/c15-running-state-001.json").is_file()


def test_a_hand_edited_artifact_is_recomputed_not_trusted(tiny_book):
    path = tiny_book.path("artifacts/claims/c15-invariance-001.json")
    artifact = json.loads(path.read_text())
    artifact["status"] = "failed"
    path.write_text(json.dumps(artifact))
    process = tiny_book.build()
    assert tiny_book.executed(process) == ["alpha.md"]
    assert json.loads(path.read_text())["status"] == "verified"


def test_edits_of_code_no_chapter_or_claim_reaches_execute_nothing(tiny_book):
    # The README and a science module neither chapter nor claim imports: no kernel. (The
    # engine modules a chapter or claim reaches are listed by tests/engine/claims/test_keys.)
    tiny_book.path("README.md").write_text("# a readme\n")
    path = tiny_book.path("harness/trainable_harness/mlp/sweeps.py")
    path.write_text(path.read_text() + "\nBUDGET += 0  # an edit nothing runs\n")
    process = tiny_book.build()
    assert process.returncode == 0, process.stdout
    assert tiny_book.executed(process) == []


def test_an_edit_of_a_module_only_one_chapters_claim_reaches_reexecutes_that_chapter(tiny_book):
    def reached(claim_id: str) -> set[str]:
        artifact = json.loads(tiny_book.path(f"artifacts/claims/{claim_id}.json").read_text())
        return set(artifact["key"]["modules"])

    witness = "trainable_harness.witnesses.chapter15.running_state"
    assert witness in reached("c15-running-state-001") - reached("c15-invariance-001")
    # An augmented assignment at module level: a key on plain assignments would miss it.
    path = tiny_book.path("harness/trainable_harness/witnesses/chapter15/running_state.py")
    path.write_text(path.read_text() + "\n_EDITS = 0\n_EDITS += 1\n")
    process = tiny_book.build()
    assert process.returncode == 0, process.stdout
    assert tiny_book.executed(process) == ["beta.md"]
    assert witness in process.stdout


def test_a_raising_cell_fails_naming_chapter_cell_and_exception_and_keeps_the_old_site(tiny_book):
    tiny_book.edit(
        "chapters/beta.md",
        "from claimbook.chapter import verify_claim\n",
        "from claimbook.chapter import verify_claim\n\nraise RuntimeError('broken on purpose')\n",
    )
    for _ in range(2):
        process = tiny_book.build()
        assert process.returncode == 1
        assert "beta.md" in process.stdout
        assert "RuntimeError: broken on purpose" in process.stdout
    site = tiny_book.path("_build/html")
    assert (site / "index.html").is_file()
    assert "older than its sources" in (site / "OUTDATED.txt").read_text()
    # The claim was computed by the build, not by the failing chapter: its artifact stands.
    artifact = json.loads(
        tiny_book.path("artifacts/claims/c15-running-state-001.json").read_text()
    )
    assert artifact["status"] == "verified"


def test_prose_that_looks_like_a_command_runs_nothing(tiny_book):
    tiny_book.path("chapters/alpha.md").touch()
    tiny_book.edit("chapters/alpha.md", "# Alpha", "# Alpha again")
    assert tiny_book.build().returncode == 0
    assert not tiny_book.path("injected").exists()
    assert not tiny_book.path("chapters/injected").exists()


def test_links_in_artifacts_are_never_published(tiny_book, tmp_path):
    # Outside the book: a folder that holds the book would put a cycle in artifacts/, which
    # sphinx-external-toc's recursive glob walks to the depth the system allows (4 s).
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_text("not for the site")
    os.symlink(secret, tiny_book.path("artifacts/claims/evil.json"))
    os.symlink(outside, tiny_book.path("artifacts/linked-dir"))
    tiny_book.edit("chapters/alpha.md", "# Alpha", "# Alpha, rendered again")
    process = tiny_book.build()
    assert "reassembled" in process.stdout  # the site was rendered with the links present
    site = tiny_book.path("_build/html")
    published = [p for p in site.rglob("*") if p.is_file()]
    assert not any("not for the site" in p.read_text(errors="ignore") for p in published)
    assert not any(p.is_symlink() for p in site.rglob("*"))
    assert process.returncode in (0, 1)


def test_a_second_build_is_refused_while_one_runs(tiny_book):
    with build_lock(tiny_book.path("_build/.build.lock")):
        process = tiny_book.build()
    assert process.returncode == 3
    assert f"pid {os.getpid()}" in process.stderr
    assert tiny_book.build().returncode == 0


def test_one_chapter_executes_alone_without_a_render(tiny_book):
    tiny_book.edit("chapters/alpha.md", "print(f", "print('edited')\nprint(f")
    tiny_book.edit("chapters/beta.md", "print(f", "print('edited')\nprint(f")
    process = tiny_book.run("execute", "beta")
    assert process.returncode == 0, process.stdout
    assert tiny_book.executed(process) == ["beta.md"]
    assert "site:" not in process.stdout
    assert tiny_book.run("execute", "gamma").returncode == 1
    assert tiny_book.executed(tiny_book.build()) == ["alpha.md"]


def test_a_claim_page_is_written_again_only_when_what_it_shows_changes(tiny_book):
    page = tiny_book.path("_build/html/claims/c15-invariance-001.html")
    # The copy lives in another folder, so its first render re-reads and writes everything.
    tiny_book.edit("chapters/beta.md", "The claim:", "A new sentence. The claim:")
    assert tiny_book.build().returncode == 0
    assert 'name="trainable-claim-page"' in page.read_text(encoding="utf-8")
    before = page.stat().st_mtime_ns
    tiny_book.edit("chapters/beta.md", "A new sentence.", "Another sentence.")
    assert tiny_book.build().returncode == 0
    assert page.stat().st_mtime_ns == before  # an unchanged page is left as it was
    tiny_book.edit(
        "claims/c15-invariance-001.yaml",
        "reason: The chapter reports three decimals.",
        "reason: The chapter reports three decimals (edited).",
    )
    process = tiny_book.build()
    assert process.returncode == 0, process.stdout
    assert "three decimals (edited)" in page.read_text(encoding="utf-8")


# --- faults: one line, no traceback, sticky; nothing outside the build products touched ---


def _no_traceback(process: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in process.stdout + process.stderr, process.stdout + process.stderr
    assert process.stderr.count("\n") <= 1, process.stderr


def test_a_cell_that_exits_fails_its_chapter_in_one_line_until_removed(tiny_book):
    tiny_book.edit(
        "chapters/beta.md",
        "from claimbook.chapter import verify_claim\n",
        "from claimbook.chapter import verify_claim\n\nraise SystemExit(0)\n",
    )
    for _ in range(2):
        process = tiny_book.build()
        assert process.returncode == 1, process.stdout + process.stderr
        _no_traceback(process)
        failed = [line for line in process.stdout.splitlines() if "FAILED" in line]
        assert len(failed) == 1
        assert failed[0].startswith("chapters/beta.md: FAILED after ")
        assert failed[0].endswith(
            ": code cell 2 raised SystemExit: 0 (a chapter runs to its last cell; remove the exit)"
        )
    tiny_book.edit("chapters/beta.md", "\nraise SystemExit(0)\n", "")
    assert tiny_book.build().returncode == 0


def test_a_claim_id_that_is_a_path_deletes_nothing_and_fails_in_one_line(tiny_book, tmp_path):
    tracked = tiny_book.path("package.json")
    tracked.write_text('{"name": "tracked"}')
    outside = tiny_book.root.parent / "outside.json"
    outside.write_text('{"name": "outside the book"}')
    tiny_book.edit(
        "chapters/beta.md",
        'verify_claim("c15-running-state-001"',
        'verify_claim("../../package", expected_harness=pin)\nverify_claim("../../../outside"',
    )
    line = (
        "make: chapters/beta.md: code cell 2: verify_claim: '../../package' is not a claim id: "
        "an id is lower-case words and digits joined by hyphens, at most 100 characters (e.g. "
        "c15-invariance-001); no path is built from it\n"
    )
    for keep_record in (True, False):  # refused while planning, then in the chapter's worker
        if not keep_record:
            tiny_book.path("_build/keys/beta.json").unlink()
        process = tiny_book.build()
        assert process.returncode == 1, process.stdout + process.stderr
        _no_traceback(process)
        assert process.stderr == line
        assert tracked.read_text() == '{"name": "tracked"}'
        assert outside.read_text() == '{"name": "outside the book"}'


@contextlib.contextmanager
def _read_only(folder):
    """``folder`` refuses changes: chmod for a user, the immutable attribute for root."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


def test_read_only_artifacts_fail_every_build_in_one_line_naming_the_file(tiny_book):
    # The claim must be computed again (its artifact is gone), into a directory it cannot
    # write: the process computing it fails, and the build says why in one line.
    tiny_book.path("artifacts/claims/c15-running-state-001.json").unlink()
    with _read_only(tiny_book.path("artifacts/claims")):
        for _ in range(2):
            process = tiny_book.build()
            assert process.returncode != 0, process.stdout + process.stderr
            _no_traceback(process)
            (line,) = process.stderr.splitlines()
            assert line.startswith("make: claims: the process computing c15-running-state-001 ")
            assert "artifacts/claims/c15-running-state-001.json" in line
            assert "writable" in line or "immutable" in line or "ermission" in line
    assert tiny_book.build().returncode == 0


def test_an_invalid_new_claim_file_fails_every_build_in_one_line_until_fixed(tiny_book):
    bad = tiny_book.path("claims/c15-bad-001.yaml")
    bad.write_text("id: c15-bad-001\nchapter: 15\nstatement: [unclosed\n")
    problem = (
        "claim c15-bad-001: claims/c15-bad-001.yaml: line 4, column 1: expected ',' or ']', "
        "but got '<stream end>' (while parsing a flow sequence that starts at line 3, column 12)"
    )
    for _ in range(2):
        process = tiny_book.build()
        assert process.returncode == 1, process.stdout + process.stderr
        _no_traceback(process)
        assert problem in process.stdout.splitlines()
    bad.unlink()
    assert tiny_book.build().returncode == 0


# --- the published site and the stored outcome are checked, never trusted ---------------------


def _render_once_here(book) -> None:
    """Render the copy once, so its pages are read and written here: the copy lives in another
    folder than the book it was copied from, and its first render re-reads every page."""
    book.edit("chapters/beta.md", "The claim:", "A new sentence. The claim:")
    process = book.build()
    assert process.returncode == 0, process.stdout
    assert "site: rendering" in process.stdout


def _tamper_with_numbers(site) -> list:
    """The attack: a number and its state edited into published pages by hand."""
    pages = [site / "claims/c15-invariance-001.html", site / "chapters/alpha.html"]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "2.055" in text
        page.write_text(text.replace("2.055", "7.777 ✓ verified"), encoding="utf-8")
    return pages


def test_a_hand_edited_page_is_published_again_and_not_kept_by_a_later_render(tiny_book):
    _render_once_here(tiny_book)
    site = tiny_book.path("_build/html")
    pages = _tamper_with_numbers(site)
    question = tiny_book.build("--question")
    assert question.returncode == 1
    assert "would be published again" in question.stdout
    assert "edited" in question.stdout and "claims/c15-invariance-001.html" in question.stdout
    process = tiny_book.build()
    assert process.returncode == 0, process.stdout
    assert "it is published again" in process.stdout
    for page in pages:
        assert "7.777" not in page.read_text(encoding="utf-8"), page
    assert tiny_book.build("--question").returncode == 0
    # A later render that starts from the published pages (a prose edit elsewhere) does not
    # carry an edit over either.
    _tamper_with_numbers(site)
    tiny_book.edit("chapters/beta.md", "A new sentence.", "Another sentence.")
    assert tiny_book.build("--question").returncode == 1
    process = tiny_book.build()
    assert process.returncode == 0, process.stdout
    for page in pages:
        assert "7.777" not in page.read_text(encoding="utf-8"), page
    assert "Another sentence." in (site / "chapters/beta.html").read_text(encoding="utf-8")
    assert tiny_book.build("--question").returncode == 0


def _entries(site) -> list:
    """The entries under ``site`` that are neither regular files nor real folders."""
    odd = []
    for folder, subfolders, names in os.walk(site):
        for name in subfolders + names:
            path = os.path.join(folder, name)
            if os.path.islink(path) or not (os.path.isfile(path) or os.path.isdir(path)):
                odd.append(os.path.relpath(path, site))
    return sorted(odd)


def test_a_planted_link_or_fifo_in_the_site_is_never_carried_into_a_new_site(tiny_book, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not for the site")
    site = tiny_book.path("_build/html")

    def plant():
        os.symlink(outside / "secret.txt", site / "planted.html")
        os.symlink(outside, site / "_static" / "planted")
        os.mkfifo(site / "planted-fifo")
        assert _entries(site) == ["_static/planted", "planted-fifo", "planted.html"]

    plant()
    question = tiny_book.build("--question")
    assert question.returncode == 1
    assert "not a regular file" in question.stdout
    process = tiny_book.build()  # the site key is unchanged: the site is published again
    assert process.returncode == 0, process.stdout
    assert _entries(site) == []
    assert tiny_book.build("--question").returncode == 0
    plant()
    _render_once_here(tiny_book)  # a render that starts from the published pages
    assert _entries(site) == []
    published = [path for path in site.rglob("*") if path.is_file()]
    assert not any("not for the site" in path.read_text(errors="ignore") for path in published)
    assert tiny_book.build("--question").returncode == 0


def test_clearing_the_stored_warnings_of_a_failing_build_does_not_make_it_pass(tiny_book):
    tiny_book.edit("chapters/alpha.md", "{claim}`c15-invariance-001`", "{claim}`c15-nope-001`")
    assert tiny_book.build().returncode == 1
    path = tiny_book.path("_build/site.json")
    outcome = json.loads(path.read_text())
    assert outcome["warnings"]
    outcome["warnings"] = []
    path.write_text(json.dumps(outcome))
    question = tiny_book.build("--question")
    assert question.returncode == 1
    assert "does not match its digest" in question.stdout
    process = tiny_book.build()
    assert process.returncode == 1, process.stdout
    assert "does not match its digest" in process.stdout
    assert "c15-nope-001" in process.stdout
    assert tiny_book.build("--question").returncode == 1


def test_a_re_signed_outcome_cannot_hide_a_failing_claim(tiny_book):
    from claimbook.pipeline.site_outcome import _outcome_digest

    tiny_book.edit("claims/c15-invariance-001.yaml", "value: 2.055", "value: 2.5")
    assert tiny_book.build().returncode == 1
    # Someone who knows how the outcome is signed clears it and signs it again: the claims
    # are judged again from the artifacts, so the build still fails on the failed claim.
    path = tiny_book.path("_build/site.json")
    outcome = json.loads(path.read_text())
    outcome["warnings"] = []
    outcome["digest"] = _outcome_digest(outcome)
    path.write_text(json.dumps(outcome))
    question = tiny_book.build("--question")
    assert question.returncode == 1
    # The failed build marked every page (claimbook.pipeline.failed_build): published again.
    assert "the site would be published again" in question.stdout
    process = tiny_book.build()
    assert process.returncode == 1, process.stdout
    assert "rms_shift_deviation" in process.stdout


def test_a_page_edited_with_its_old_mtime_is_read_again_and_published(tiny_book):
    _render_once_here(tiny_book)
    intro = tiny_book.path("intro.md")
    before = intro.stat()
    intro.write_text(intro.read_text().replace("Two chapters", "Two chapters, edited quietly"))
    os.utime(intro, ns=(before.st_atime_ns, before.st_mtime_ns))  # as `touch -r` does
    question = tiny_book.build("--question")
    assert question.returncode == 1
    assert "the site would be rendered again" in question.stdout
    process = tiny_book.build()
    assert process.returncode == 0, process.stdout
    page = tiny_book.path("_build/html/intro.html").read_text(encoding="utf-8")
    assert "edited quietly" in page
    assert tiny_book.build("--question").returncode == 0
