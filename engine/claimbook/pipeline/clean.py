"""``make clean``: remove the build products under the build lock: ``_build/`` but the lock,
``chapters/*.ipynb``, and ``artifacts/`` but its ``README.md`` and ``.gitignore``."""

import shutil
import sys
from pathlib import Path

from claimbook import paths
from claimbook.errors import BuildError, BuildLockError, OutsideBuildProductsError
from claimbook.pipeline.checkout import build_lock, check_checkout, lock_path
from claimbook.text import one_line

KEPT_IN_ARTIFACTS = ("README.md", ".gitignore")


def clean() -> list[Path]:
    """Remove the build products; return them. BuildLockError or OutsideBuildProductsError
    with nothing removed."""
    lock = lock_path()
    with build_lock(lock):
        candidates = [p for p in sorted(paths.BUILD_DIR.iterdir()) if p != lock]
        candidates += sorted(paths.CHAPTERS_DIR.glob("*.ipynb"))
        if paths.ARTIFACTS_DIR.is_dir():
            candidates += [
                p for p in sorted(paths.ARTIFACTS_DIR.iterdir()) if p.name not in KEPT_IN_ARTIFACTS
            ]
        for path in candidates:  # all checked before the first is removed
            paths.build_product(path)
        for path in candidates:  # a link is unlinked, never followed
            if path.is_symlink() or not path.is_dir():
                path.unlink(missing_ok=True)
            else:
                shutil.rmtree(path)
    return candidates


def main(argv: list[str]) -> int:
    """``python -m claimbook clean``: exit 0; 3 if a build holds the lock; 2 if a path to remove
    is not a build product."""
    if argv:
        print(f"clean: takes no arguments, got {' '.join(argv)}", file=sys.stderr)
        return 2
    try:
        check_checkout()  # never the build products of the checkout a copied .venv names
        removed = clean()
    except OutsideBuildProductsError as error:
        print(f"make clean: {one_line(error)}", file=sys.stderr)
        return 2
    except BuildError as error:  # 3, as a build's, when another build holds the lock
        print(f"make clean: {one_line(error)}; nothing was removed", file=sys.stderr)
        return 3 if isinstance(error, BuildLockError) else 1
    print(f"make clean: removed {len(removed)} build product(s)")
    return 0
