"""Fixtures of the claims tests: a toy registry, a fixture registry, toy computations.

A toy claim's computation is put in a module ``trainable_harness.witnesses.toy`` for the
duration of one test only (``monkeypatch.setitem`` on ``sys.modules``), as the engine finds
a witness: from its dotted name;
the real claims are verified into temporary artifact directories, so the repository's own
``artifacts/`` is never touched.
"""

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from claimbook.claims import artifact_path, harness_pin, verify_claim
from claimbook.sources import CHAPTER_HEADER
from trainable_harness import __version__
from trainable_harness.normalization import centered_normalize

FIXTURE_REGISTRY = Path(__file__).resolve().parents[1] / "fixtures" / "registry"
TOY_ID = "t01-toy-001"
# Where a page states the toy claim, as the claim pages' model records a place.
PLACE = {
    "page": "chapters/page.html",
    "anchor": f"claim-{TOY_ID}-3",
    "chapter": "15. A page",
    "section": "15.1 A section",
    "as": "badge",
}
TOY_COMPUTE = "trainable_harness.witnesses.toy.toy_witness"
TOY_CLAIM = """\
id: t01-toy-001
chapter: 1
statement: A toy witness returns a half, three, true and a nested spread of 1.25.
seed:
  policy: derived
  name: toy-seed
contract:
  dtype: FP64
  device: CPU
  estimator: closed form
compute: trainable_harness.witnesses.toy.toy_witness
expect:
  ratio:
    value: 0.5
    abs_tol: 1.0e-12
    reason: A few ulps.
  count:
    equals: 3
  flag:
    equals: true
  group.spread:
    interval: [1.0, 1.5]
    reason: Anywhere in the band the text claims.
"""


class ToyWitness:
    """A computation whose output a test can change; records the seeds it was called with.

    It calls one real harness function (``centered_normalize``), so its key names it.
    """

    def __init__(self):
        self.seeds = []
        self.result = {
            "ratio": np.float64(0.5),
            "count": np.int64(3),
            "flag": np.bool_(True),
            "group": {"spread": 1.25},
        }

    def __call__(self, seed):
        self.seeds.append(seed)
        centered_normalize(np.array([1.0, 2.0, 4.0]))
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


@pytest.fixture
def toy(monkeypatch):
    witness = ToyWitness()

    def toy_witness(seed):
        return witness(seed)

    install_witnesses(monkeypatch, "trainable_harness.witnesses.toy", toy_witness=toy_witness)
    return witness


@pytest.fixture
def registry(tmp_path, toy):
    directory = tmp_path / "claims"
    directory.mkdir()
    (directory / f"{TOY_ID}.yaml").write_text(TOY_CLAIM)
    return directory


@pytest.fixture
def artifacts(tmp_path):
    return tmp_path / "artifacts" / "claims"


def _fixture_module():
    """The fixture registry's computations, from the kinds book's extension (one copy)."""
    path = Path(__file__).resolve().parents[1] / "books" / "kinds" / "_fixture"
    specification = importlib.util.spec_from_file_location(
        "fixture_computations", path / "fixture_computations.py"
    )
    module = importlib.util.module_from_spec(specification)
    specification.loader.exec_module(module)
    return module


FIXTURE_MODULE = _fixture_module()


def install_witnesses(monkeypatch, name, **functions):
    """Make ``name`` (a ``trainable_harness.witnesses.*`` module) hold ``functions``, marked."""
    monkeypatch.setitem(sys.modules, name, FIXTURE_MODULE.witness_module(name, functions))


class FixtureComputations:
    """The computations of the fixture registry; ``shift_result`` can be overridden."""

    _module = FIXTURE_MODULE

    def __init__(self):
        self.shift_result = None

    def noise_mean(self, seed):
        return self._module.noise_mean(seed)

    def shift_change(self):
        change = self._module.shift_change()  # computed even when overridden, as a run would
        return self.shift_result if self.shift_result is not None else change


@pytest.fixture
def fixture_registry(tmp_path, monkeypatch):
    """A copy of tests/fixtures/registry with its computations registered."""
    directory = tmp_path / "fixture-claims"
    shutil.copytree(FIXTURE_REGISTRY, directory)
    fixtures = FixtureComputations()
    install_witnesses(
        monkeypatch,
        FIXTURE_MODULE.MODULE,
        noise_mean=fixtures.noise_mean,
        shift_change=fixtures.shift_change,
    )
    fixtures.directory = directory
    return fixtures


def verify_toy(registry, artifacts, **options):
    return verify_claim(
        TOY_ID, harness_pin(), registry_dir=registry, artifacts_dir=artifacts, **options
    )


def edit_artifact(artifacts, edit, claim_id=TOY_ID):
    path = artifact_path(claim_id, artifacts)
    artifact = json.loads(path.read_text())
    edit(artifact)
    path.write_text(json.dumps(artifact, sort_keys=True, indent=2) + "\n")


# --- chapters holding pins, for the repin tests ------------------------------------------


def chapter(pin, comment=""):
    return (
        CHAPTER_HEADER
        + "# A chapter\n\n```{code-cell} ipython3\n:tags: [parameters]\n\n"
        + f'pin = "{pin}"{comment}\n```\n\nProse quoting pin = "0.0.1" stays.\n'
    )


def make_chapters(tmp_path):
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    (chapters / "15-pinned.md").write_text(chapter("0.1.0+f5d27deff4da", "  # a note"))
    (chapters / "16-unpinned.md").write_text(CHAPTER_HEADER + "# no claims here\n")
    (chapters / "17-current.md").write_text(chapter(__version__))
    return chapters
