"""Error classes of the book engine: the claims machinery, the chapter reader and the build.

Every error is a :class:`ValueError` subclass (through :class:`BookError`), so a caller
that catches ``ValueError`` keeps working, while the CLI and the build catch the precise
failure and print it on one line. The instruments' own errors (bad shapes, eps, dtypes) are
the harness's (``trainable_harness.errors``); the engine never imports them: it reports any
exception a claim's computation raises as that claim's failure.

Examples
--------
>>> from claimbook.errors import BookError, RegistryError
>>> issubclass(RegistryError, BookError) and issubclass(BookError, ValueError)
True
"""

from __future__ import annotations

__all__ = ["BookError"]


class BookError(ValueError):
    """Base class of every error the book engine raises."""


# --- claims/: the claim registry, verification and artifacts --------------------------------

__all__ += [
    "ClaimError",
    "ClaimFailedError",
    "InvalidClaimIdError",
    "MissingArtifactError",
    "RegistryError",
    "SeedNameError",
    "StaleArtifactError",
    "StalePinError",
    "TamperedArtifactError",
    "UnknownClaimError",
    "WitnessResultError",
]


class ClaimError(BookError):
    """Base class of the errors of the claims machinery (:mod:`claimbook.claims`)."""


class UnknownClaimError(ClaimError):
    """No registry file ``claims/<id>.yaml`` exists; the message lists the nearest ids."""


class InvalidClaimIdError(UnknownClaimError):
    """A claim id that is not of the registry's id grammar; refused before any path is built."""


class RegistryError(ClaimError):
    """A registry file is malformed or disagrees with its witness; names file and field."""


class ClaimFailedError(ClaimError):
    """A result misses its expectation; lists field, expected, got and tolerance."""


class StalePinError(ClaimError):
    """A chapter's harness pin differs from the running harness; re-pin with ``make repin``."""


class StaleArtifactError(ClaimError):
    """An artifact was written by another harness or another version of its registry file."""


class TamperedArtifactError(ClaimError):
    """An artifact on disk disagrees with a recomputation or with its own stored result."""


class MissingArtifactError(ClaimError):
    """A claim has no artifact on disk although one was required."""


class WitnessResultError(ClaimError):
    """A witness returned something other than a mapping of scalar result fields."""


class SeedNameError(ClaimError):
    """``claim_seed`` was given a ``name`` that is not a string."""


__all__ += ["ComputationNotFoundError", "IntervalError"]


class ComputationNotFoundError(ClaimError):
    """A registry's ``compute`` names no marked witness function that can be imported."""


class IntervalError(ClaimError):
    """An interval of a mean was asked for with too few, non-finite values or a bad level."""


# --- sources.py and the build: chapter sources, keys, the build lock -----------------------

__all__ += [
    "BuildError",
    "BuildLockError",
    "ChapterSourceError",
    "InvalidChapterStemError",
    "KeyRecordError",
]


class ChapterSourceError(BookError):
    """A chapter source cannot be read as the build needs it (missing, malformed, no pin)."""


class InvalidChapterStemError(ChapterSourceError):
    """A chapter name (the stem of ``chapters/<stem>.md``) that cannot name the build's files."""


class BuildError(BookError):
    """The book's build cannot go on (a chapter failed, the site build failed)."""


class BuildLockError(BuildError):
    """Another build holds the build lock."""


class KeyRecordError(BuildError):
    """A chapter's record ``_build/keys/<stem>.json`` is unusable; the chapter executes again."""


# --- paths.py and figures.py: the book's root, figure labels --------------------------------

__all__ += [
    "EnvironmentMismatchError",
    "InvalidFigureLabelError",
    "OutsideBuildProductsError",
    "RepositoryRootError",
    "UnknownFigureError",
]


class RepositoryRootError(BookError):
    """``TRAINABLE_ROOT`` names a directory that does not exist."""


class EnvironmentMismatchError(BookError):
    """The running environment is not the book's: installed distributions or Python differ
    from the lock (:mod:`claimbook.environment`), or the engine running is not the one the
    book's checkout holds (:mod:`claimbook.pipeline.checkout`). Exit status 2."""


class OutsideBuildProductsError(BookError):
    """A path the engine was to write or remove lies outside ``artifacts/`` and ``_build/``."""


class UnknownFigureError(BookError):
    """No chapter (or not the chapter named) has a figure directive with this ``:name:``."""


class InvalidFigureLabelError(BookError):
    """A figure label that cannot name a file (empty, a path, or unusual characters)."""


# --- settings.py: settings and inputs glued for the prose -----------------------------------

__all__ += ["SettingError"]


class SettingError(BookError):
    """A setting glued for the prose has a name that is not an identifier or an unusable value."""
