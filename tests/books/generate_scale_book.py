"""Write a generated fixture book of N chapters, for measuring the build at scale.

    python tests/books/generate_scale_book.py OUT [--chapters 20]

Each chapter computes a small normalization with the harness, glues one setting, states
one result bound to its claim, and verifies its own claim (``c<k>-scale-001``, a copy of
the book's ``c15-invariance-001`` registered for chapter k). The book carries its own copy
of the harness, so ``python -m claimbook bench --root OUT`` can
edit them freely.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import yaml

from claimbook import paths
from claimbook.sources import CHAPTER_HEADER
from trainable_harness import __version__

FIRST_CHAPTER = 15
CONFIG = """title: Generated scale book
only_build_toc_files: true
exclude_patterns: [_build, "chapters/*.md", harness, claims, artifacts]
execute:
  execute_notebooks: "off"
sphinx:
  extra_extensions:
    - claimbook.extensions.chapter_numbers
    - claimbook.extensions.claims
  config:
    trainable_first_chapter: {first}
    numfig: true
    numfig_secnum_depth: 1
"""
CHAPTER = (
    CHAPTER_HEADER
    + """
# Generated chapter {number}

```{{code-cell}} ipython3
:tags: [parameters]

pin = "{pin}"
```

```{{code-cell}} ipython3
import numpy as np

from trainable_harness import centered_normalize, verify_claim
from trainable_harness import glue_setting

x = np.linspace(-1.0, 1.0, 8) * {number}
glue_setting("size", x.size)
largest = float(np.max(centered_normalize(x)))
claim = verify_claim("{claim_id}", expected_harness=pin)
print(f"claim {{claim['id']}}: {{claim['status']}}")
```

Over {{glue:text}}`size` values, the RMS map moves a coordinate by
{{claim-value}}`{claim_id}.rms_shift_deviation:.3f`; the claim: {{claim}}`{claim_id}`.
"""
)


def generate(target: Path, chapters: int) -> Path:
    """Write the book at ``target`` (which must not exist) and return it."""
    if chapters < 1:
        raise ValueError(f"chapters must be at least 1, got {chapters}")
    (target / "chapters").mkdir(parents=True)
    (target / "claims").mkdir()
    (target / "artifacts").mkdir()
    (target / "_config.yml").write_text(CONFIG.format(first=FIRST_CHAPTER))
    (target / "intro.md").write_text("# Generated scale book\n")
    template = yaml.safe_load((paths.CLAIMS_DIR / "c15-invariance-001.yaml").read_text())
    entries = []
    for index in range(chapters):
        number = FIRST_CHAPTER + index
        claim_id = f"c{number}-scale-001"
        stem = f"chapter-{index + 1:02d}"
        (target / "chapters" / f"{stem}.md").write_text(
            CHAPTER.format(number=number, pin=__version__, claim_id=claim_id)
        )
        claim = {**template, "id": claim_id, "chapter": number}
        (target / "claims" / f"{claim_id}.yaml").write_text(yaml.safe_dump(claim, sort_keys=False))
        entries.append({"file": f"chapters/{stem}"})
    toc = {
        "format": "jb-book",
        "root": "intro",
        "options": {"numbered": True},
        "chapters": entries,
    }
    (target / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))
    shutil.copytree(
        paths.REPO_ROOT / "harness" / "trainable_harness",
        target / "harness" / "trainable_harness",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", type=Path)
    parser.add_argument("--chapters", type=int, default=20)
    options = parser.parse_args(argv)
    if options.target.exists():
        parser.error(f"{options.target} exists; choose a new directory")
    generate(options.target, options.chapters)
    print(f"wrote a {options.chapters}-chapter book to {options.target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
