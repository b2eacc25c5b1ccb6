"""Write a generated fixture book of N chapters, for measuring the build at scale.

    python tests/books/generate_scale_book.py OUT [--chapters 20]

Chapters come in four kinds, in turn (:data:`KINDS`), so that a book of any size mixes the
costs a real one has:

- ``invariance``: a small normalization; states one value of its own claim
  (``c<k>-scale-001``, a copy of the book's ``c15-invariance-001``);
- ``figure``: the same claim, and a figure drawn with the book's style and saved as an
  artifact (``fig-gen-<k>``), shown with its caption;
- ``statistical``: a claim over ten seeds (``c<k>-spread-001``, a copy of the book's
  ``c15-estimator-shift-001``, computed from the same seeds) quoted as a mean and interval;
- ``moments``: the invariance claim, and streaming moments of half a million values (a
  chapter whose own kernel does some work).

The first two chapters also count the values a batch-norm statistic pools, which no other
chapter (and no claim) does: an edit of that harness function must execute exactly those
two again (the benchmark's two-chapter edit). The book carries its own copy of the harness, so
``python -m bench --root OUT`` can edit them freely.
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
KINDS = ("invariance", "figure", "statistical", "moments")
SHARED_BY_TWO = ("trainable_harness.layers.reduction_sets", "values_per_statistic")
CONFIG = """title: Generated scale book
only_build_toc_files: true
exclude_patterns: [_build, "chapters/*.md", harness, claims, artifacts]
execute:
  execute_notebooks: "off"
sphinx:
  extra_extensions:
    - claimbook.extensions.chapter_numbers
    - claimbook.extensions.claims
    - claimbook.extensions.figure_artifacts
    - claimbook.extensions.plain_code_tokens
  config:
    trainable_first_chapter: {first}
    html_use_index: false  # as the book: no empty index page
    numfig: true
    numfig_secnum_depth: 1
"""
OPENING = (
    CHAPTER_HEADER
    + """
# Generated chapter {number}

```{{code-cell}} ipython3
:tags: [parameters]

pin = "{pin}"
```
"""
)
INVARIANCE = """
```{{code-cell}} ipython3
import numpy as np

from trainable_harness import centered_normalize
from claimbook.chapter import glue_setting, verify_claim

x = np.linspace(-1.0, 1.0, 8) * {number}
glue_setting("size", x.size)
largest = float(np.max(centered_normalize(x)))
claim = verify_claim("{claim_id}", expected_harness=pin)
print(f"claim {{claim['id']}}: {{claim['status']}}")
```

Over {{glue:text}}`size` values, the RMS map moves a coordinate by
{{claim-value}}`{claim_id}.rms_shift_deviation:.3f`; the claim: {{claim}}`{claim_id}`.
"""
SHARED = """
```{{code-cell}} ipython3
from trainable_harness import values_per_statistic

pooled = values_per_statistic("batch", (8, 16, 7, 7))
glue_setting("pooled", pooled)
```

Batch norm over 8 images of 16 channels of 7 by 7 pools {{glue:text}}`pooled` values per
statistic.
"""
FIGURE = """
```{{code-cell}} ipython3
import matplotlib.pyplot as plt

from claimbook.chapter import FIGURE_STYLE, glue_figure

with plt.rc_context(FIGURE_STYLE):
    fig, ax = plt.subplots()
    ax.plot(x, centered_normalize(x), marker="o")
    ax.set(xlabel="input value", ylabel="normalized value")
    fig.tight_layout()
glue_figure(fig, "{label}")
```

```{{glue:figure}} {label}
:name: {label}
:alt: The normalized values of eight evenly spaced inputs rise along a straight line.

Normalized values of eight evenly spaced inputs. {{figure-artifact}}`{label}`
```
"""
STATISTICAL = """
```{{code-cell}} ipython3
from claimbook.chapter import verify_claim

spread = verify_claim("{claim_id}", expected_harness=pin)
print(f"claim {{spread['id']}}: {{spread['status']}}")
```

Growing the evaluation batch from 8 to 32 values divides the discrepancy by
{{claim-value}}`{claim_id}.batch_size_ratio:.2f`; the claim: {{claim}}`{claim_id}`.
"""
MOMENTS = """
```{{code-cell}} ipython3
from trainable_harness import streaming_moments

values = np.random.default_rng({number}).normal(4.0, 2.0, size=500_000)
moments = streaming_moments(values)
glue_setting("count", values.size)
```

Streaming moments of {{glue:text}}`count` values, one pass.
"""


def chapter_text(index: int, pin: str) -> tuple[str, dict[str, str]]:
    """Chapter ``index`` (0-based): its MyST text, and its claims as ``{id: template id}``."""
    number = FIRST_CHAPTER + index
    kind = KINDS[index % len(KINDS)]
    scale = f"c{number}-scale-001"
    parts = [
        OPENING.format(number=number, pin=pin),
        INVARIANCE.format(number=number, claim_id=scale),
    ]
    claims = {scale: "c15-invariance-001"}
    if index < 2:
        parts.append(SHARED.format())
    if kind == "figure":
        parts.append(FIGURE.format(label=f"fig-gen-{number}"))
    elif kind == "statistical":
        spread = f"c{number}-spread-001"
        parts.append(STATISTICAL.format(claim_id=spread))
        claims[spread] = "c15-estimator-shift-001"
    elif kind == "moments":
        parts.append(MOMENTS.format(number=number))
    return "".join(parts), claims


def generate(target: Path, chapters: int) -> Path:
    """Write the book at ``target`` (which must not exist) and return it."""
    if chapters < 1:
        raise ValueError(f"chapters must be at least 1, got {chapters}")
    (target / "chapters").mkdir(parents=True)
    (target / "claims").mkdir()
    (target / "artifacts").mkdir()
    (target / "_config.yml").write_text(CONFIG.format(first=FIRST_CHAPTER))
    (target / "intro.md").write_text("# Generated scale book\n")
    templates = {}
    entries = []
    for index in range(chapters):
        number = FIRST_CHAPTER + index
        stem = f"chapter-{index + 1:02d}"
        text, claims = chapter_text(index, __version__)
        (target / "chapters" / f"{stem}.md").write_text(text)
        for claim_id, template_id in claims.items():
            if template_id not in templates:
                path = paths.CLAIMS_DIR / f"{template_id}.yaml"
                templates[template_id] = yaml.safe_load(path.read_text())
            claim = {**templates[template_id], "id": claim_id, "chapter": number}
            claim.pop("catches", None)  # the book's perturbations name the book's claims
            (target / "claims" / f"{claim_id}.yaml").write_text(
                yaml.safe_dump(claim, sort_keys=False)
            )
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
