"""``python -m checks COMMAND``: checks of the book the engine builds, run by ``make``.

::

    binder [--pip] [--against DIR]   what Binder does, in a fresh environment (make binder-check)
    matrix [--root DIR] [--work DIR] [--keep] [--reference SITE]
                                     the CI workflow's jobs, locally, against one build
                                     (make matrix-check)
    mutate [--check | --stale] [ID ...]
                                     each claim under the mistakes it names (make mutate,
                                     make mutate-check)

Run from the repository root. Each command's options are its module's (:mod:`checks.binder`,
:mod:`checks.matrix`, :mod:`checks.mutate`; ``--help`` after the command lists them). A failure
the check does not handle ends in one line, as the engine's commands do
(:func:`claimbook.failures.report`); an unknown command prints the usage and exits 2.
"""

from __future__ import annotations

import sys

from checks import binder, matrix, mutate
from claimbook.failures import report

USAGE = "usage: python -m checks {binder,matrix,mutate} [OPTIONS]  (COMMAND --help: its options)"
# Each command's entry point and what it is doing, as a failure line says it.
COMMANDS = {
    "binder": (binder.main, "checking what Binder does"),
    "matrix": (matrix.main, "running the CI jobs locally"),
    "mutate": (mutate.main, "running the claims' perturbations"),
}


def main(argv: list[str] | None = None) -> int:
    """Run ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv in (["-h"], ["--help"]):
        print(USAGE)
        return 0
    if not argv or argv[0] not in COMMANDS:
        print(USAGE, file=sys.stderr)
        return 2
    run, doing = COMMANDS[argv[0]]
    try:
        return run(argv[1:])
    except Exception as error:
        return report(error, doing)


if __name__ == "__main__":
    raise SystemExit(main())
