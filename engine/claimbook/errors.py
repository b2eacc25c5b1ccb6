"""The errors the book engine raises, each a ValueError through BookError; the command line
reports them in one line (:mod:`claimbook.failures`)."""


class BookError(ValueError):
    """Base class of every error the book engine raises."""


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


class ComputationNotFoundError(ClaimError):
    """A registry's ``compute`` names no marked witness function that can be imported."""


class IntervalError(ClaimError):
    """An interval of a mean was asked for with too few, non-finite values or a bad level."""


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


class RepositoryRootError(BookError):
    """``TRAINABLE_ROOT`` names a directory that does not exist."""


class EnvironmentMismatchError(BookError):
    """Distributions or Python differ from the lock, or the engine is another checkout's."""


class OutsideBuildProductsError(BookError):
    """A path the engine was to write or remove lies outside ``artifacts/`` and ``_build/``."""


class UnknownFigureError(BookError):
    """No chapter (or not the chapter named) has a figure directive with this ``:name:``."""


class InvalidFigureLabelError(BookError):
    """A figure label that cannot name a file (empty, a path, or unusual characters)."""


class SettingError(BookError):
    """A setting glued for the prose has a name that is not an identifier or an unusable value."""


__all__ = [name for name in list(globals()) if name.endswith("Error")]
