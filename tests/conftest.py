"""Shared fixtures: checked-in fixture books under ``tests/books/``, built as the book is.

A fixture book is copied with the book's own ``_static/`` into a temporary
root, its claim registry is filled from the book's ``claims/`` (so a fixture never carries a
second, drifting copy of a registered claim), and it is built strictly, as the book's site is:
by the build driver's render (:class:`claimbook.pipeline.render.SiteRender`, the strict
``jupyter-book build -W -n --keep-going`` split in two), run in the test process with the
engine's paths pointing at the temporary root; or, with ``cli=True``, by that command itself,
with ``TRAINABLE_ROOT`` pointing the engine at the temporary root.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

from claimbook import cache, paths

TIERS = ("unit", "claims", "book", "site")
# The folders that hold a tier's tests, for the tiers whose Makefile target collects only
# those folders (collecting every test module costs each pytest-xdist worker about 10 s).
TIER_FOLDERS = {
    "claims": ("tests/harness/witnesses",),
    "book": ("tests/engine/pipeline", "tests/engine/extensions", "tests/checks"),
    "site": ("tests/site", "tests/chapters"),
}
_TESTS = Path(__file__).resolve().parent


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    """Collect with bytecode caching on, whatever ``PYTHONDONTWRITEBYTECODE`` says.

    Under that variable (set on this machine) pytest rewrites the asserts of every test
    module, and Python compiles every module of the checkout, again in each worker of each
    tier: about 4 of the 10 CPU-s a collection takes. The caches go to ``__pycache__``
    (ignored by git and by the build's digests) and are checked against each source's
    modification time and size, as everywhere. Only collection writes them: the copies of
    the harness that tests edit are imported later, and by processes that keep the
    variable, so a same-size edit within one second can never run stale bytecode.
    """
    before = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = before


def pytest_collection_modifyitems(items):
    """Give every test without a tier marker the ``unit`` tier (doctests included); refuse a
    test of a tier in :data:`TIER_FOLDERS` outside that tier's folders, which its Makefile
    target would never run."""
    misplaced = []
    for item in items:
        if not any(item.get_closest_marker(tier) for tier in TIERS):
            item.add_marker(pytest.mark.unit)
        where = Path(item.path).resolve().relative_to(_TESTS.parent).as_posix()
        for tier, folders in TIER_FOLDERS.items():
            inside = any(where == f or where.startswith(f + "/") for f in folders)
            if item.get_closest_marker(tier) and not inside:
                misplaced.append(f"{item.nodeid}: a {tier} test outside {', '.join(folders)}")
    if misplaced:
        raise pytest.UsageError("\n".join(misplaced))


# This file holds no doctests; collected as a doctest module it would be imported a second
# time under the name "conftest", which tests/engine/claims/conftest.py also has. The mutate
# fixture module puts modules in sys.modules when imported: only its tests import it.
# pytorch/: the PyTorch cross-check, run in an environment of its own (`make pytorch-check`).
collect_ignore = ["conftest.py", "fixtures/mutations/mutation_fixtures.py", "pytorch"]

BOOKS = Path(__file__).resolve().parent / "books"
FIXTURE_REGISTRY = Path(__file__).resolve().parent / "fixtures" / "registry"
JUPYTER_BOOK = Path(sys.executable).with_name("jupyter-book")
# The paths of claimbook.paths under the root, pointed at a fixture's root for its render.
_ROOTED_PATHS = (
    "HARNESS_DIR",
    "CLAIMS_DIR",
    "CHAPTERS_DIR",
    "ARTIFACTS_DIR",
    "CLAIM_ARTIFACTS_DIR",
    "FIGURES_DIR",
    "BUILD_DIR",
)


@dataclass
class FixtureBook:
    """A fixture book in a temporary root."""

    root: Path

    @property
    def registry(self) -> Path:
        return self.root / "claims"

    @property
    def artifacts(self) -> Path:
        return self.root / "artifacts" / "claims"

    @property
    def site(self) -> Path:
        return self.root / "_build" / "html"

    def register(self, *claim_ids: str) -> None:
        """Copy these claims' registry files from the book into the fixture's registry."""
        self.registry.mkdir(exist_ok=True)
        for claim_id in claim_ids:
            shutil.copy(paths.CLAIMS_DIR / f"{claim_id}.yaml", self.registry)

    def build(self, cli: bool = False, carry_over: bool = False) -> subprocess.CompletedProcess:
        """The strict HTML build; the completed process (its output in ``.log``).

        By default the driver's render runs here, in this process (a second build reuses the
        first one's environment and pages, as the driver does); its warnings are the log,
        and any warning fails the build (exit status 1). ``cli=True`` runs
        ``jupyter-book build -W -n --keep-going`` in a process of its own instead (start-up
        and imports cost about two seconds of each such build). With ``carry_over`` the render
        also starts from the last one's published site and records its outcome, as the
        driver's does, so Sphinx writes only the pages whose sources changed.
        """
        if not cli:
            return self._render(carry_over)
        process = subprocess.run(
            [
                str(JUPYTER_BOOK),
                "build",
                str(self.root),
                "--builder",
                "html",
                "-W",
                "-n",
                "--keep-going",
            ],
            env={**os.environ, "TRAINABLE_ROOT": str(self.root)},
            capture_output=True,
            text=True,
            timeout=300,
        )
        process.log = process.stdout + process.stderr
        return process

    def _render(self, carry_over: bool = False) -> subprocess.CompletedProcess:
        from claimbook.errors import BuildError
        from claimbook.pipeline.render import SiteRender
        from claimbook.pipeline.site_outcome import publish, read_outcome, write_outcome

        with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings():
            # What Python shows a build in a process of its own: no deprecation notices of
            # the extensions the build loads (the tests' own filter makes warnings errors).
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.simplefilter("ignore", PendingDeprecationWarning)
            patch.setenv(paths.ROOT_ENVIRONMENT_VARIABLE, str(self.root))
            for name in _ROOTED_PATHS:
                relative = getattr(paths, name).relative_to(paths.REPO_ROOT)
                patch.setattr(paths, name, self.root / relative)
            patch.setattr(paths, "REPO_ROOT", self.root)
            published = read_outcome() if carry_over else None
            site = None
            try:
                site = SiteRender(fresh=False, published=published)
                target, problems = site.run()
            except BuildError as error:
                problems = [str(error)]
            else:
                files = publish(target)
                if carry_over:
                    write_outcome("fixture", problems, files, site.sources)
            finally:
                cache.reset()  # nothing read under the fixture's root outlives its render
        process = subprocess.CompletedProcess(["render", str(self.root)], int(bool(problems)))
        process.log = "\n".join(problems)
        process.written = sorted(site.written) if site is not None else []  # pages written
        return process

    def page(self, name: str) -> str:
        """The built HTML of site path ``name`` (e.g. ``chapters/page.html``), or ''."""
        path = self.site / name
        return path.read_text(encoding="utf-8") if path.exists() else ""

    def edit(self, name: str, old: str, new: str) -> None:
        """Replace ``old`` (which must occur) by ``new`` in the fixture's file ``name``."""
        path = self.root / name
        text = path.read_text(encoding="utf-8")
        assert old in text, f"{old!r} not in {name}"
        path.write_text(text.replace(old, new), encoding="utf-8")


def copy_book(name: str, tmp_path: Path) -> FixtureBook:
    """``tests/books/<name>`` in a temporary root, with the book's extensions and lock."""
    root = tmp_path / "book"
    shutil.copytree(BOOKS / name, root)
    shutil.copytree(paths.REPO_ROOT / "_static", root / "_static")
    # The lock is part of every claim's key: the fixture has the book's, so a claim verified
    # here in the test process has the key the build recomputes under TRAINABLE_ROOT.
    shutil.copy(paths.REPO_ROOT / "requirements.txt", root)
    return FixtureBook(root)


@pytest.fixture(scope="session")
def copy_fixture_book():
    """:func:`copy_book`, for a test module that builds a fixture book more than once."""
    return copy_book


@pytest.fixture
def claim_book(tmp_path) -> FixtureBook:
    """``tests/books/claims`` (one chapter, the ledger) with ``c15-invariance-001`` registered."""
    book = copy_book("claims", tmp_path)
    book.register("c15-invariance-001")
    return book


@pytest.fixture
def kinds_book(tmp_path, monkeypatch) -> FixtureBook:
    """``tests/books/kinds``: the statistical and the refuted claim of ``tests/fixtures/registry``.

    Their computations live in the book's own extension (``_fixture/``), which puts them in
    ``sys.modules`` when the book builds; here for this test only, to verify in-process.
    """
    book = copy_book("kinds", tmp_path)
    shutil.copytree(FIXTURE_REGISTRY, book.registry)
    monkeypatch.syspath_prepend(str(book.root / "_fixture"))
    import fixture_computations

    fixture_computations.register(_ModulesPatch(monkeypatch))
    return book


class _ModulesPatch:
    """``sys.modules`` seen through ``monkeypatch``: an item set here is undone after the test."""

    def __init__(self, monkeypatch):
        self._monkeypatch = monkeypatch

    def __setitem__(self, name, module):
        import sys

        self._monkeypatch.setitem(sys.modules, name, module)
