"""The images: scikit-learn's handwritten digits, and a fixed stratified split.

:func:`load_digit_images` is the one place that touches scikit-learn: it imports
``sklearn.datasets`` when first called (the harness itself needs only numpy) and reads the
1 797 images of 8 x 8 pixels that scikit-learn ships inside its wheel (``load_digits``; no
download). Everything else takes arrays.
"""

from __future__ import annotations

import functools
import hashlib
from typing import NamedTuple

import numpy as np

from trainable_harness.errors import DigitsError

__all__ = ["DigitImages", "load_digit_images", "split_seed", "stratified_split"]

PIXEL_MAX = 16.0  # the digits' pixels are counts 0..16 of a 4 x 4 block of a 32 x 32 bitmap


class DigitImages(NamedTuple):
    """``images (n, 8, 8)`` float64 in ``[0, 1]``; ``labels (n,)`` int64 in ``0..9``."""

    images: np.ndarray
    labels: np.ndarray


@functools.cache
def _loaded() -> tuple[np.ndarray, np.ndarray]:
    try:
        from sklearn.datasets import load_digits  # optional: trainable-harness[data]
    except ImportError as error:
        raise DigitsError(
            "load_digit_images needs scikit-learn (pip install 'trainable-harness[data]'), "
            f"which could not be imported: {error}"
        ) from None
    digits = load_digits()
    images = np.asarray(digits.images, dtype=np.float64) / PIXEL_MAX
    labels = np.asarray(digits.target, dtype=np.int64)
    images.flags.writeable = False
    labels.flags.writeable = False
    return images, labels


def load_digit_images() -> DigitImages:
    """scikit-learn's 1 797 digits, pixels divided by 16 so they lie in ``[0, 1]``.

    Loaded once per process (by ``sklearn.datasets.load_digits``, from the copy inside
    scikit-learn's wheel) and returned as read-only arrays; callers copy what they change.

    Raises
    ------
    DigitsError
        scikit-learn is not installed (the message says how to install it).
    """
    return DigitImages(*_loaded())


def stratified_split(labels, test_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(train, test)``: each class split apart in the same proportion.

    Per class with ``n_k`` images, ``round(test_fraction n_k)`` chosen at random (the
    generator ``numpy.random.default_rng(seed)``, classes in increasing order) go to the
    test set and the rest to the training set; both index arrays are sorted. The same
    ``seed`` gives the same split.

    Raises
    ------
    DigitsError
        ``labels`` not a 1-D integer array, ``test_fraction`` outside ``(0, 1)``, or a class
        left with no image on one side.

    Examples
    --------
    >>> train, test = stratified_split(np.array([0, 0, 0, 0, 1, 1]), 0.5, seed=1)
    >>> len(train), len(test), sorted(np.r_[train, test].tolist()) == list(range(6))
    (3, 3, True)
    """
    labels = np.asarray(labels)
    if labels.ndim != 1 or not np.issubdtype(labels.dtype, np.integer):
        raise DigitsError(f"labels must be a 1-D integer array, got {labels.dtype} {labels.shape}")
    if isinstance(test_fraction, bool) or not 0.0 < float(test_fraction) < 1.0:
        raise DigitsError(f"test_fraction must lie in (0, 1), got {test_fraction!r}")
    rng = np.random.default_rng(seed)
    train, test = [], []
    for label in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == label))
        count = round(float(test_fraction) * members.size)
        if count == 0 or count == members.size:
            raise DigitsError(
                f"test_fraction {test_fraction!r} leaves class {int(label)} ({members.size} "
                "images) with no image on one side of the split"
            )
        test.append(members[:count])
        train.append(members[count:])
    return np.sort(np.concatenate(train)), np.sort(np.concatenate(test))


def split_seed(name: str) -> int:
    """The seed of a split named ``name``: the first 8 hex digits of ``sha256(name)``.

    The rule the book's registry uses for a claim's seed, so a witness derives its split
    from its claim's id without importing the book's engine.

    >>> split_seed("c16-digits-batch-size")
    390346929
    """
    if not isinstance(name, str) or not name:
        raise DigitsError(f"name must be a non-empty string, got {name!r}")
    return int(hashlib.sha256(name.encode("utf-8")).hexdigest()[:8], 16)
