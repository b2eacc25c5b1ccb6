"""``python -m claimbook COMMAND``: the book engine's one command line (``docs/engine.md``)."""

import os
import sys

_BUILD_COMMANDS = ("build", "execute", "render")
# Options the claims commands take before the command word, each with one value.
_GLOBAL_OPTIONS = ("--registry", "--artifacts")


def _command(argv: list[str]) -> str:
    """The first word of ``argv`` that is neither an option nor its value."""
    words = iter(argv)
    for word in words:
        if word in _GLOBAL_OPTIONS:
            next(words, None)
        elif not word.startswith("-"):
            return word
    return ""


def main(argv: list[str] | None = None) -> int:
    """Run ``argv`` (default ``sys.argv[1:]``); return the exit status, never raise."""
    argv = sys.argv[1:] if argv is None else list(argv)
    command = _command(argv)
    try:
        return _dispatch(command, argv)
    except Exception as error:
        from claimbook import failures

        return failures.report(error, failures.DOING.get(command, f"running {command!r}"))


def _dispatch(command: str, argv: list[str]) -> int:
    if command in ("claims", "repin"):
        from claimbook.claims import cli

        return cli.main(argv)
    if command == "clean":
        from claimbook.pipeline import clean

        return clean.main(argv[1:])
    if command == "build" and _nothing_to_do(argv):
        return 0
    from claimbook.pipeline import driver

    return driver.main(argv)


def _nothing_to_do(argv: list[str]) -> bool:
    """For ``build`` (``--question``): True, having said so, if the tree has not changed since
    a clean build (:mod:`claimbook.pipeline.noop`); the engine is not imported."""
    options = list(argv)
    if len(options) >= 3 and options[1] == "--jobs":
        del options[1:3]  # the number of parallel chapters does not matter to a no-op
    if options not in (["build"], ["build", "--question"]):
        return False
    import time

    started = time.perf_counter()
    from claimbook import paths
    from claimbook.errors import BuildError
    from claimbook.pipeline import noop
    from claimbook.pipeline.checkout import check_checkout

    try:
        check_checkout()
    except BuildError:
        return False  # another checkout: the full path refuses it, in its own words
    if not noop.unchanged_since_clean_build():
        return False
    if options[-1] == "--question":
        print("up to date")
    else:
        seconds = time.perf_counter() - started
        site = paths.BUILD_DIR / "html" / "index.html"
        unchanged = "nothing changed since the last clean build"
        print(f"The book is built ({seconds:.1f} s; {unchanged}): {site}")
    return True


if __name__ == "__main__":
    status = main()
    workers = sys.modules.get("claimbook.pipeline.workers")  # None: no chapter worker started
    if _command(sys.argv[1:]) in _BUILD_COMMANDS and workers is not None:
        # Everything is written and closed; tearing down the interpreter (a render's trees)
        # takes up to half a second and changes nothing, so the process ends here.
        workers.end_workers()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    raise SystemExit(status)
