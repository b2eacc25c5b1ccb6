"""The book's Sphinx extensions (`_ext/`), exercised by building tiny fixture books.

Each test writes a one-page book into a temporary root (`TRAINABLE_ROOT` points the harness's
paths at it), verifies or breaks a claim there, and runs the same strict `jupyter-book build`
the Makefile runs. A badge's state must come from the artifact, and any state but verified
must fail the strict build while the page still shows it.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from trainable_harness import claims, harness_pin, paths

CLAIM = "c15-invariance-001"
JUPYTER_BOOK = Path(sys.executable).with_name("jupyter-book")
CONFIG = """title: fixture
only_build_toc_files: true
execute:
  execute_notebooks: "off"
sphinx:
  local_extensions:
    chapter_numbers: {ext}
    claims: {ext}
  config:
    trainable_first_chapter: 15
    numfig: true
    numfig_secnum_depth: 1
"""
TOC = """format: jb-book
root: intro
options:
  numbered: true
chapters:
  - file: chapters/page
"""
PAGE = """# A page

## A section

The claim holds: {{claim}}`{claim}`.

```{{claim-line}} {claim}
```

It builds on {{book-chapter}}`2`.
"""


def make_book(root: Path, *, page_claim: str = CLAIM) -> None:
    (root / "chapters").mkdir(parents=True)
    (root / "claims").mkdir()
    ext = os.path.relpath(paths.REPO_ROOT / "_ext", root)
    (root / "_config.yml").write_text(CONFIG.format(ext=ext))
    (root / "_toc.yml").write_text(TOC)
    (root / "intro.md").write_text("# Fixture\n")
    (root / "chapters" / "page.md").write_text(PAGE.format(claim=page_claim))
    shutil.copy(paths.CLAIMS_DIR / f"{CLAIM}.yaml", root / "claims")
    # The claim's key covers the lock; the build reads it from this root.
    shutil.copy(paths.REPO_ROOT / "requirements.txt", root / "requirements.txt")


def build(root: Path) -> tuple[subprocess.CompletedProcess, str]:
    environment = {**os.environ, "TRAINABLE_ROOT": str(root)}
    process = subprocess.run(
        [str(JUPYTER_BOOK), "build", str(root), "--builder", "html", "-W", "-n", "--keep-going"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    page = root / "_build" / "html" / "chapters" / "page.html"
    return process, page.read_text(encoding="utf-8") if page.exists() else ""


def verify_in(root: Path) -> dict:
    return claims.verify_claim(
        CLAIM,
        expected_harness=harness_pin(),
        registry_dir=root / "claims",
        artifacts_dir=root / "artifacts" / "claims",
    )


def test_a_verified_claim_builds_green_with_its_line_and_published_artifact(tmp_path):
    make_book(tmp_path)
    verify_in(tmp_path)
    process, html = build(tmp_path)
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-3000:]
    assert 'class="claim-badge claim-verified' in html
    assert "seed: none" in html and "estimator: deterministic map and Jacobian" in html
    assert '<h1><span class="section-number">15. </span>A page' in html
    assert 'title="Chapter 2 of the full book' in html
    published = tmp_path / "_build" / "html" / "artifacts" / "claims" / f"{CLAIM}.json"
    assert (
        published.read_bytes()
        == (tmp_path / "artifacts" / "claims" / f"{CLAIM}.json").read_bytes()
    )


def test_a_failed_claim_shows_red_and_fails_the_strict_build(tmp_path):
    make_book(tmp_path)
    registry = tmp_path / "claims" / f"{CLAIM}.yaml"
    entry = yaml.safe_load(registry.read_text())
    entry["expect"]["rms_shift_deviation"]["value"] = 3.0
    registry.write_text(yaml.safe_dump(entry, sort_keys=False))
    assert verify_in(tmp_path)["status"] == "failed"  # recorded, not raised
    process, html = build(tmp_path)
    assert process.returncode != 0
    assert f"claim {CLAIM} is failed" in process.stderr + process.stdout
    assert "claim-failed" in html and "claim-verified" not in html


def test_an_artifact_from_another_harness_shows_stale(tmp_path):
    make_book(tmp_path)
    verify_in(tmp_path)
    artifact = tmp_path / "artifacts" / "claims" / f"{CLAIM}.json"
    artifact.write_text(artifact.read_text().replace(harness_pin(), "0.0.0+000000000000"))
    process, html = build(tmp_path)
    assert process.returncode != 0
    assert "claim-stale" in html and "claim-verified" not in html


def test_a_missing_artifact_shows_not_run_and_an_unknown_id_fails(tmp_path):
    make_book(tmp_path)
    process, html = build(tmp_path)
    assert process.returncode != 0
    assert "claim-not-run" in html
    shutil.rmtree(tmp_path)
    make_book(tmp_path, page_claim="c15-invariance-00l")
    process, _ = build(tmp_path)
    assert process.returncode != 0
    assert "unknown claim" in process.stderr + process.stdout
    assert CLAIM in process.stderr + process.stdout  # the error suggests the nearest id
