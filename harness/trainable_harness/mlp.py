"""A small multilayer perceptron in numpy, every backward pass written out (chapter 16).

Chapter 16, section "Why batch normalization tolerates larger learning rates". The network
is ``linear -> [batch norm] -> ReLU -> linear -> [batch norm] -> ReLU -> linear ->
softmax cross-entropy``, trained by full-batch gradient descent on a task the harness
draws (a random teacher network labels Gaussian inputs).

Every function works on arrays with any leading *replica* axes ``(...)`` before the batch
axis, so one call trains the same network at many learning rates (or evaluates it at
many points along a line) at once; replicas never mix. Shapes:

- activations ``(..., n, width)``: ``n`` examples along axis ``-2``;
- weights ``(..., fan_in, fan_out)``, biases and batch-norm ``gamma``, ``beta``
  ``(..., fan_out)``.

Backward passes (``dY`` is the gradient of the loss with respect to a layer's output):

- linear ``Y = X W + b``: ``dX = dY W^T``, ``dW = X^T dY``, ``db = sum_n dY``;
- ReLU ``Y = max(Z, 0)``: ``dZ = dY [Z > 0]``;
- batch norm in train mode over the ``n`` axis (eqs. 16.1-16.4, population variance,
  ``eps`` inside the root), with ``Z_hat = (Z - mean) / sqrt(var + eps)``:
  ``dgamma = sum_n dY Z_hat``, ``dbeta = sum_n dY`` and
  ``dZ = (gamma / sqrt(var + eps)) (dY - mean_n(dY) - Z_hat mean_n(dY Z_hat))``;
- softmax cross-entropy, mean over examples: ``dlogits = (softmax - onehot) / n``.

The tests check every one against central differences. Arithmetic is float64, as
written (no scaling): the public layer functions check their arguments (finite real
arrays of fitting shapes; class labels in ``[0, CLASSES)``, one per example) and refuse a
result beyond float64's range; :func:`loss_and_gradients` and the training functions
check the task and parameters once and then return a diverging network's inf or NaN loss
as is, because divergence is what the learning-rate experiments measure.

Examples
--------
>>> task = make_teacher_task(seed=0, n=32)
>>> params = init_mlp(seed=1, batch_norm=True)
>>> loss, grads = loss_and_gradients(params, task, batch_norm=True)
>>> sorted(grads) == sorted(params)
True
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from claimbook.calls import cached_with_calls
from trainable_harness.errors import (
    DegenerateNormalizationError,
    MLPError,
    ResultOverflowError,
    ShapeError,
    UnknownChoiceError,
    UnsupportedDtypeError,
    check_finite,
    check_integer,
    check_real,
    check_seed,
)
from trainable_harness.normalization import validated_eps

__all__ = [
    "TeacherTask",
    "batch_norm_backward",
    "batch_norm_forward",
    "init_mlp",
    "label_entropy",
    "learning_rate_sweep",
    "linear_backward",
    "linear_forward",
    "loss_and_gradients",
    "make_teacher_task",
    "probe_along_training",
    "probe_gradient_direction",
    "relu_backward",
    "relu_forward",
    "softmax_cross_entropy",
    "softmax_cross_entropy_backward",
    "train_full_batch",
]

INPUTS = 16
WIDTH = 32
CLASSES = 4
BN_EPS = 1e-5  # PyTorch's default, added to the population variance


class TeacherTask(NamedTuple):
    """Inputs ``X`` ``(n, INPUTS)`` and integer labels ``labels`` ``(n,)`` in ``[0, CLASSES)``."""

    X: np.ndarray
    labels: np.ndarray


def make_teacher_task(seed: int, n: int = 256) -> TeacherTask:
    """Label standard normal inputs by the argmax of a random two-layer tanh teacher.

    The teacher has 64 hidden units with weights ``N(0, 1/fan_in)``; its logits are
    multiplied by 3 so that classes are neither balanced by chance nor trivially linear.
    Inputs get a shared offset of 1 per coordinate and scales from 0.5 to 2, so the first
    layer's pre-activations are neither centered nor of unit scale (which batch norm
    would otherwise get for free).

    Parameters
    ----------
    seed : int
    n : int, default 256
        Number of training examples, >= 2.

    Returns
    -------
    TeacherTask

    Raises
    ------
    ShapeError
        If ``n < 2``.

    Examples
    --------
    >>> task = make_teacher_task(seed=3, n=8)
    >>> task.X.shape, task.labels.dtype.kind
    ((8, 16), 'i')
    """
    n = check_integer(n, "n", minimum=2, error=ShapeError)  # batch statistics need two
    rng = np.random.default_rng(check_seed(seed))
    Z = rng.normal(size=(int(n), INPUTS))
    hidden = np.tanh(Z @ rng.normal(size=(INPUTS, 64)) / np.sqrt(INPUTS))
    logits = 3.0 * hidden @ rng.normal(size=(64, CLASSES)) / np.sqrt(64)
    scales = np.geomspace(0.5, 2.0, INPUTS)
    return TeacherTask(X=1.0 + scales * Z, labels=np.argmax(logits, axis=1))


# --- argument checks ------------------------------------------------------------------------
#
# The public layer functions check their arrays and refuse a result beyond float64's range;
# the training loop calls the unchecked forms (``_linear_forward``, ...) once the task and
# parameters are checked, so that a diverging replica's inf or NaN is what it measures.


def _real_array(values, name: str, *, min_ndim: int = 1) -> np.ndarray:
    """``values`` as a finite real array of rank >= ``min_ndim`` (its dtype kept)."""
    array = np.asarray(values)
    if array.dtype.kind not in "iuf":
        raise UnsupportedDtypeError(
            f"{name} has dtype {array.dtype}; real floating or integer values are expected"
        )
    if array.ndim < min_ndim:
        raise ShapeError(f"{name} has shape {array.shape}; at least {min_ndim} axes are expected")
    check_finite(array, name)
    return array


def _check_result(result: np.ndarray, what: str, rescale: str) -> np.ndarray:
    finite = np.isfinite(result)
    if not finite.all():
        index = tuple(int(i) for i in np.argwhere(~finite)[0])
        raise ResultOverflowError(
            f"{what} at index {index} is beyond float64's range, so it has no finite value; "
            f"rescale {rescale}"
        )
    return result


def _check_labels(labels, rows: int, classes: int) -> np.ndarray:
    """Integer class labels, one per row, each in ``[0, classes)``."""
    labels = np.asarray(labels)
    if labels.dtype.kind not in "iu":
        raise UnsupportedDtypeError(
            f"labels have dtype {labels.dtype}; integer class indices are expected"
        )
    if labels.shape != (rows,):
        raise ShapeError(
            f"labels have shape {labels.shape}; one label per example is expected, shape "
            f"({rows},) (the logits have {rows} rows)"
        )
    outside = (labels < 0) | (labels >= classes)
    if outside.any():
        index = int(np.argmax(outside))
        raise ShapeError(
            f"labels[{index}] = {labels[index]} is not a class index in [0, {classes}) "
            f"(the logits have {classes} classes; a negative label would wrap around)"
        )
    return labels


def _broadcast_into(replicas: tuple, parameters, what: str) -> None:
    """Refuse per-feature parameters whose replica axes do not broadcast into ``replicas``."""
    for name, value in parameters:
        try:
            fits = np.broadcast_shapes(replicas, value.shape[:-1]) == replicas
        except ValueError:
            fits = False
        if not fits:
            raise ShapeError(
                f"{what}: {name} has shape {value.shape}; its replica axes "
                f"{value.shape[:-1]} must broadcast into the batch's {replicas}"
            )


def _check_bool(value, name: str) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise UnknownChoiceError(f"{name} must be True or False, got {value!r}")
    return bool(value)


# --- layers: forward and backward -----------------------------------------------------------


def linear_forward(X, W, b=None) -> np.ndarray:
    """``Y = X W + b`` with replica axes: ``X (..., n, i)``, ``W (..., i, o)``, ``b (..., o)``.

    Raises
    ------
    ShapeError
        Shapes that do not fit (the message names them).
    NonFiniteInputError, UnsupportedDtypeError
        NaN/inf, or bool, complex or object arrays.
    ResultOverflowError
        An output beyond float64's range.

    Examples
    --------
    >>> linear_forward(np.ones((2, 3)), np.ones((3, 1)), np.array([0.5]))
    array([[3.5],
           [3.5]])
    """
    X, W = _real_array(X, "X", min_ndim=2), _real_array(W, "W", min_ndim=2)
    if X.shape[-1] != W.shape[-2]:
        raise ShapeError(f"X {X.shape} and W {W.shape}: X's last axis must match W's fan-in")
    if b is not None:
        b = _real_array(b, "b")
        if b.shape[-1] != W.shape[-1]:
            raise ShapeError(f"b {b.shape} and W {W.shape}: b needs one value per output")
    with np.errstate(over="ignore", invalid="ignore"):
        Y = _linear_forward(X, W, b)
    return _check_result(Y, "X W + b", "X, W or b")


def _linear_forward(X, W, b=None) -> np.ndarray:
    Y = np.matmul(X, W)
    return Y if b is None else Y + b[..., None, :]


def linear_backward(dY, X, W, with_bias: bool = True):
    """Gradients of ``Y = X W + b``: returns ``(dX, dW, db)`` (``db`` None without bias).

    Examples
    --------
    >>> dX, dW, db = linear_backward(np.ones((2, 1)), np.ones((2, 3)), np.ones((3, 1)))
    >>> dX.shape, dW.shape, db.tolist()
    ((2, 3), (3, 1), [2.0])
    """
    dY, X = _real_array(dY, "dY", min_ndim=2), _real_array(X, "X", min_ndim=2)
    W = _real_array(W, "W", min_ndim=2)
    if X.shape[-1] != W.shape[-2] or dY.shape[-1] != W.shape[-1] or dY.shape[-2] != X.shape[-2]:
        raise ShapeError(
            f"dY {dY.shape}, X {X.shape} and W {W.shape} do not fit Y = X W: dY must be "
            "(..., n, fan_out), X (..., n, fan_in), W (..., fan_in, fan_out)"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        grads = _linear_backward(dY, X, W, _check_bool(with_bias, "with_bias"))
    for name, grad in zip(("dX", "dW", "db"), grads, strict=True):
        if grad is not None:
            _check_result(grad, name, "dY, X or W")
    return grads


def _linear_backward(dY, X, W, with_bias: bool = True):
    dX = np.matmul(dY, np.swapaxes(W, -1, -2))
    dW = np.matmul(np.swapaxes(X, -1, -2), dY)
    db = dY.sum(axis=-2) if with_bias else None
    return dX, dW, db


def relu_forward(Z) -> np.ndarray:
    """``max(Z, 0)``.

    Examples
    --------
    >>> relu_forward(np.array([-1.0, 2.0]))
    array([0., 2.])
    """
    return np.maximum(_real_array(Z, "Z"), 0.0)


def relu_backward(dY, Z) -> np.ndarray:
    """``dY [Z > 0]`` (the subgradient 0 is taken at ``Z = 0``).

    Examples
    --------
    >>> relu_backward(np.array([5.0, 5.0]), np.array([-1.0, 2.0]))
    array([0., 5.])
    """
    dY, Z = _real_array(dY, "dY"), _real_array(Z, "Z")
    if dY.shape != Z.shape:
        raise ShapeError(f"dY {dY.shape} and Z {Z.shape} must have one shape")
    return dY * (Z > 0.0)


class BatchNormCache(NamedTuple):
    """What the batch-norm backward pass needs: ``Z_hat`` and ``1 / sqrt(var + eps)``."""

    Z_hat: np.ndarray
    inv_std: np.ndarray


def batch_norm_forward(Z, gamma, beta, eps: float = BN_EPS):
    """Train-mode batch norm over the example axis ``-2`` (eqs. 16.1-16.4).

    ``Y = gamma (Z - mean) / sqrt(population_variance + eps) + beta``, one statistic per
    feature and replica. Equal, for one replica, to
    :func:`trainable_harness.layers.batch_norm` on ``(n, width)`` input.

    Computed as written, without scaling: use :func:`trainable_harness.layers.batch_norm`
    for inputs whose squares leave float64's range.

    Returns
    -------
    (numpy.ndarray, BatchNormCache)

    Raises
    ------
    ShapeError
        ``Z`` not ``(..., n, width)`` with ``n >= 1``, or ``gamma``, ``beta`` not
        ``(..., width)``.
    NegativeEpsilonError, NonFiniteInputError, UnsupportedDtypeError
        A negative eps; NaN/inf or non-real values.
    DegenerateNormalizationError
        ``eps = 0`` and a feature constant over the batch.
    ResultOverflowError
        A variance whose squares overflow float64 (``|Z|`` beyond about ``1e154``), or an
        output beyond range.

    Examples
    --------
    >>> Y, _ = batch_norm_forward(np.array([[1.0], [3.0]]), np.ones(1), np.zeros(1), eps=0.0)
    >>> Y.ravel()
    array([-1.,  1.])
    """
    eps = validated_eps(eps)
    Z = _real_array(Z, "Z", min_ndim=2)
    gamma, beta = _real_array(gamma, "gamma"), _real_array(beta, "beta")
    if Z.shape[-2] < 1 or gamma.shape[-1] != Z.shape[-1] or beta.shape[-1] != Z.shape[-1]:
        raise ShapeError(
            f"Z {Z.shape}, gamma {gamma.shape}, beta {beta.shape}: Z must be (..., n, width) "
            "with n >= 1 and gamma, beta (..., width)"
        )
    _broadcast_into(Z.shape[:-2], (("gamma", gamma), ("beta", beta)), "batch_norm_forward")
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        Y, cache = _batch_norm_forward(Z, gamma, beta, eps)
    if not np.isfinite(cache.inv_std).all() or not (cache.inv_std > 0).all():
        with np.errstate(over="ignore"):
            constant = np.ptp(Z, axis=-2) == 0
        if eps == 0.0 and constant.any():
            raise DegenerateNormalizationError(
                "batch_norm_forward with eps = 0: a feature of Z is constant over the batch, "
                "so its variance is 0; pass eps > 0"
            )
        raise ResultOverflowError(
            "batch_norm_forward: a variance of Z leaves float64's range (its squares "
            "overflow, or vanish with eps = 0): rescale Z, or use "
            "trainable_harness.layers.batch_norm, which scales before squaring"
        )
    return _check_result(Y, "gamma Z_hat + beta", "gamma and beta"), cache


def _batch_norm_forward(Z, gamma, beta, eps: float = BN_EPS):
    n = Z.shape[-2]
    mean = Z.sum(axis=-2, keepdims=True) / n
    centered = Z - mean
    # einsum sums the squares without a temporary array the size of Z (the sweeps of the
    # learning-rate section spend most of their time here).
    population_variance = np.einsum("...nk,...nk->...k", centered, centered)[..., None, :] / n
    inv_std = 1.0 / np.sqrt(population_variance + eps)
    Z_hat = centered
    Z_hat *= inv_std  # in place: centered is not needed after this
    Y = Z_hat * gamma[..., None, :]
    Y += beta[..., None, :]
    return Y, BatchNormCache(Z_hat=Z_hat, inv_std=inv_std)


def batch_norm_backward(dY, cache: BatchNormCache, gamma):
    """Backward pass of :func:`batch_norm_forward`: returns ``(dZ, dgamma, dbeta)``.

    ``dZ = gamma inv_std (dY - mean_n(dY) - Z_hat mean_n(dY Z_hat))``: the centering
    projector removes the mean of the upstream gradient, and the scale removes its
    component along ``Z_hat`` (the radial direction of chapter 15's Jacobian, eq. 15.3).

    Examples
    --------
    >>> Z = np.array([[1.0], [2.0], [4.0]])
    >>> _, cache = batch_norm_forward(Z, np.ones(1), np.zeros(1), eps=0.0)
    >>> dZ, dgamma, dbeta = batch_norm_backward(np.ones((3, 1)), cache, np.ones(1))
    >>> float(np.abs(dZ).max()) < 1e-15, dbeta.tolist()   # a shift of Y's gradient is lost
    (True, [3.0])
    """
    if not isinstance(cache, BatchNormCache):
        raise TypeError(f"cache must be the BatchNormCache of batch_norm_forward, got {cache!r}")
    dY, gamma = _real_array(dY, "dY", min_ndim=2), _real_array(gamma, "gamma")
    if dY.shape != cache.Z_hat.shape or gamma.shape[-1] != dY.shape[-1]:
        raise ShapeError(
            f"dY {dY.shape} must have the shape of the forward pass's Z {cache.Z_hat.shape}, "
            f"and gamma {gamma.shape} one value per feature"
        )
    _broadcast_into(dY.shape[:-2], (("gamma", gamma),), "batch_norm_backward")
    with np.errstate(over="ignore", invalid="ignore"):
        grads = _batch_norm_backward(dY, cache, gamma)
    for name, grad in zip(("dZ", "dgamma", "dbeta"), grads, strict=True):
        _check_result(grad, name, "dY or gamma")
    return grads


def _batch_norm_backward(dY, cache: BatchNormCache, gamma):
    Z_hat, inv_std = cache
    n = Z_hat.shape[-2]
    dgamma = np.einsum("...nk,...nk->...k", dY, Z_hat)
    dbeta = dY.sum(axis=-2)
    d_hat = dY * gamma[..., None, :]
    # mean_n(d_hat Z_hat) = gamma dgamma / n: no second pass over the batch.
    dZ = d_hat - (dbeta * gamma)[..., None, :] / n
    dZ -= Z_hat * (gamma * dgamma)[..., None, :] / n
    dZ *= inv_std
    return dZ, dgamma, dbeta


def softmax_cross_entropy(logits, labels) -> np.ndarray:
    """Mean over examples of ``logsumexp(logits) - logits[label]``; shape ``(...)``.

    Examples
    --------
    Raises
    ------
    ShapeError
        Labels that are not one class index in ``[0, classes)`` per row (a label of -1
        would pick the last class), or logits of rank below 2.
    UnsupportedDtypeError, NonFiniteInputError
        Non-integer labels, non-real or non-finite logits.
    ResultOverflowError
        A loss beyond float64's range (logits spread wider than it).

    >>> round(float(softmax_cross_entropy(np.zeros((2, 4)), np.array([0, 3]))), 6)
    1.386294
    """
    logits = _real_array(logits, "logits", min_ndim=2)
    labels = _check_labels(labels, logits.shape[-2], logits.shape[-1])
    with np.errstate(over="ignore", invalid="ignore"):
        loss = _softmax_cross_entropy(logits, labels)
    _check_result(np.asarray(loss), "the cross-entropy", "the logits")
    return loss


def _softmax_cross_entropy(logits, labels) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_norm = np.log(np.exp(shifted).sum(axis=-1))
    picked = np.take_along_axis(shifted, _label_index(labels, shifted), axis=-1)[..., 0]
    return np.mean(log_norm - picked, axis=-1)


def _label_index(labels, logits) -> np.ndarray:
    index = np.broadcast_to(np.asarray(labels)[:, None], (*logits.shape[-2:-1], 1))
    return np.broadcast_to(index, (*logits.shape[:-1], 1))


def softmax_cross_entropy_backward(logits, labels) -> np.ndarray:
    """``(softmax(logits) - onehot(labels)) / n``, the gradient of the mean loss.

    Examples
    --------
    Raises
    ------
    As :func:`softmax_cross_entropy`.

    >>> softmax_cross_entropy_backward(np.zeros((1, 2)), np.array([1]))
    array([[ 0.5, -0.5]])
    """
    logits = _real_array(logits, "logits", min_ndim=2)
    labels = _check_labels(labels, logits.shape[-2], logits.shape[-1])
    with np.errstate(over="ignore", invalid="ignore"):
        return _softmax_cross_entropy_backward(logits, labels)


def _softmax_cross_entropy_backward(logits, labels) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    probabilities = np.exp(shifted)
    probabilities /= probabilities.sum(axis=-1, keepdims=True)
    onehot = np.zeros_like(probabilities)
    np.put_along_axis(onehot, _label_index(labels, logits), 1.0, axis=-1)
    return (probabilities - onehot) / logits.shape[-2]


# --- the network ----------------------------------------------------------------------------


def init_mlp(seed: int, batch_norm: bool, replicas: tuple[int, ...] = ()) -> dict:
    """He-initialized weights (``N(0, 2 / fan_in)``), zero biases, ``gamma = 1``, ``beta = 0``.

    With ``batch_norm`` the two hidden linear layers have no bias (batch norm's ``beta``
    replaces it, and a bias before the centering would get zero gradient). Every replica
    starts from the same draw.

    Returns
    -------
    dict
        ``W1 (16, 32)``, ``W2 (32, 32)``, ``W3 (32, 4)``, ``b3 (4,)`` and either
        ``b1``, ``b2`` or ``gamma1``, ``beta1``, ``gamma2``, ``beta2`` (each ``(32,)``),
        every array with the leading ``replicas`` axes.

    Examples
    --------
    >>> sorted(init_mlp(seed=0, batch_norm=True))
    ['W1', 'W2', 'W3', 'b3', 'beta1', 'beta2', 'gamma1', 'gamma2']
    """
    batch_norm = _check_bool(batch_norm, "batch_norm")
    if not isinstance(replicas, tuple):
        raise ShapeError(f"replicas must be a tuple of sizes, got {replicas!r}")
    replicas = tuple(
        check_integer(size, f"replicas[{i}]", minimum=0, error=ShapeError)
        for i, size in enumerate(replicas)
    )
    rng = np.random.default_rng(check_seed(seed))
    sizes = [(INPUTS, WIDTH), (WIDTH, WIDTH), (WIDTH, CLASSES)]
    params = {}
    for k, (fan_in, fan_out) in enumerate(sizes, start=1):
        params[f"W{k}"] = rng.normal(scale=np.sqrt(2.0 / fan_in), size=(fan_in, fan_out))
    params["b3"] = np.zeros(CLASSES)
    for k in (1, 2):
        if batch_norm:
            params[f"gamma{k}"] = np.ones(WIDTH)
            params[f"beta{k}"] = np.zeros(WIDTH)
        else:
            params[f"b{k}"] = np.zeros(WIDTH)
    return {name: np.broadcast_to(v, (*replicas, *v.shape)).copy() for name, v in params.items()}


def loss_and_gradients(params: dict, task: TeacherTask, batch_norm: bool):
    """Full-batch loss ``(...)`` and gradients (same keys and shapes as ``params``).

    Examples
    --------
    The arithmetic is float64 as written, without range checks: parameters far enough
    out give an inf or NaN loss, returned as is, because that is what the learning-rate
    experiments measure (:func:`train_full_batch` marks such a replica diverged). The
    arguments themselves are checked.

    Raises
    ------
    UnknownChoiceError
        ``batch_norm`` is not a bool.
    MLPError
        ``params`` lacks a parameter of the network or has one of the wrong shape.
    ShapeError, UnsupportedDtypeError, NonFiniteInputError
        A task whose ``X`` is not finite ``(n, INPUTS)`` or whose labels are not class
        indices in ``[0, CLASSES)``, one per example.

    Examples
    --------
    >>> task = make_teacher_task(seed=0, n=16)
    >>> loss, _ = loss_and_gradients(init_mlp(seed=0, batch_norm=False), task, False)
    >>> loss.shape
    ()
    """
    batch_norm = _check_bool(batch_norm, "batch_norm")
    _check_task(task)
    _check_params(params, batch_norm)
    return _loss_and_gradients(params, task, batch_norm)


def _check_task(task) -> None:
    if not isinstance(task, TeacherTask):
        raise TypeError(f"task must be a TeacherTask, got {type(task).__name__}")
    X = _real_array(task.X, "task.X", min_ndim=2)
    if X.ndim != 2 or X.shape[1] != INPUTS or X.shape[0] < 2:
        raise ShapeError(f"task.X must have shape (n, {INPUTS}) with n >= 2, got {X.shape}")
    _check_labels(task.labels, X.shape[0], CLASSES)


def _check_params(params, batch_norm: bool) -> None:
    if not isinstance(params, dict):
        raise MLPError(f"params must be the dict of init_mlp, got {type(params).__name__}")
    names = ["W1", "W2", "W3", "b3"] + (
        ["gamma1", "beta1", "gamma2", "beta2"] if batch_norm else ["b1", "b2"]
    )
    missing = sorted(set(names) - set(params))
    if missing:
        raise MLPError(
            f"params lacks {missing} (batch_norm={batch_norm}); build them with init_mlp"
        )
    shapes = {"W1": (INPUTS, WIDTH), "W2": (WIDTH, WIDTH), "W3": (WIDTH, CLASSES)}
    for name in names:
        value = _real_array(params[name], f"params[{name!r}]")
        wanted = shapes.get(name, (CLASSES,) if name == "b3" else (WIDTH,))
        if value.shape[value.ndim - len(wanted) :] != wanted:
            raise MLPError(
                f"params[{name!r}] has shape {value.shape}; expected (..., "
                f"{', '.join(map(str, wanted))})"
            )


def _loss_and_gradients(params: dict, task: TeacherTask, batch_norm: bool):
    H = task.X
    caches = []
    for k in (1, 2):
        Z = _linear_forward(H, params[f"W{k}"], None if batch_norm else params[f"b{k}"])
        bn_cache = None
        if batch_norm:
            Z_pre = Z
            Z, bn_cache = _batch_norm_forward(Z_pre, params[f"gamma{k}"], params[f"beta{k}"])
        caches.append((H, Z, bn_cache))
        H = np.maximum(Z, 0.0)
    logits = _linear_forward(H, params["W3"], params["b3"])
    loss = _softmax_cross_entropy(logits, task.labels)

    grads = {}
    dH, grads["W3"], grads["b3"] = _linear_backward(
        _softmax_cross_entropy_backward(logits, task.labels), H, params["W3"]
    )
    for k in (2, 1):
        H_in, Z, bn_cache = caches[k - 1]
        dZ = dH * (Z > 0.0)
        if batch_norm:
            dZ, grads[f"gamma{k}"], grads[f"beta{k}"] = _batch_norm_backward(
                dZ, bn_cache, params[f"gamma{k}"]
            )
        dH, grads[f"W{k}"], db = _linear_backward(dZ, H_in, params[f"W{k}"], not batch_norm)
        if not batch_norm:
            grads[f"b{k}"] = db
    return loss, grads


DIVERGED_LOSS = 1e3  # a loss this far above log(CLASSES) = 1.39 has left the basin


def _take(arrays: dict, keep: np.ndarray) -> dict:
    return {name: a[keep] for name, a in arrays.items()}


class TrainingRun(NamedTuple):
    """Losses ``(steps + 1, *replicas)``; ``NaN`` after a replica has diverged."""

    losses: np.ndarray
    params: dict


def train_full_batch(
    task: TeacherTask, *, seed: int, batch_norm: bool, learning_rates, steps: int
) -> TrainingRun:
    """Full-batch gradient descent, one replica per learning rate, from one initialization.

    A replica whose loss becomes non-finite or exceeds ``DIVERGED_LOSS`` is marked
    diverged: its remaining losses are NaN and its parameters stay where they were when
    it diverged; it is dropped from the arrays, so it never touches the others.

    Parameters
    ----------
    task : TeacherTask
    seed : int
        Seed of :func:`init_mlp`.
    batch_norm : bool
    learning_rates : array_like, shape (L,)
        Positive, finite.
    steps : int
        >= 1.

    Returns
    -------
    TrainingRun

    Raises
    ------
    MLPError
        A learning rate that is not positive and finite, or ``steps < 1``.

    Examples
    --------
    >>> run = train_full_batch(make_teacher_task(0, n=64), seed=0, batch_norm=True,
    ...                        learning_rates=[0.1, 1.0], steps=5)
    >>> run.losses.shape
    (6, 2)
    """
    learning_rates = _positive_vector(learning_rates, "learning_rates")
    steps = check_integer(steps, "steps", minimum=1, error=MLPError)
    batch_norm = _check_bool(batch_norm, "batch_norm")
    _check_task(task)
    params = init_mlp(seed, batch_norm, learning_rates.shape)
    losses = np.full((int(steps) + 1, learning_rates.shape[0]), np.nan)
    # Indices of the replicas still training; diverged ones are dropped from the arrays
    # (their parameters are kept as they were) so they cost nothing afterwards.
    alive = np.arange(learning_rates.shape[0])
    live = dict(params)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for t in range(int(steps) + 1):
            loss, grads = _loss_and_gradients(live, task, batch_norm)
            ok = np.isfinite(loss) & (loss < DIVERGED_LOSS)
            losses[t, alive[ok]] = loss[ok]
            if not ok.all():
                alive, live, grads = alive[ok], _take(live, ok), _take(grads, ok)
            if t == steps or alive.size == 0:
                break
            rates = learning_rates[alive]
            for name, g in grads.items():
                live[name] = live[name] - rates.reshape((-1,) + (1,) * (g.ndim - 1)) * g
    for name in params:
        params[name][alive] = live[name]
    return TrainingRun(losses=losses, params=params)


def _positive_vector(values, name: str) -> np.ndarray:
    """``values`` as a 1-D float64 array of positive finite numbers, else :class:`MLPError`."""
    array = np.asarray(values)
    if array.dtype.kind not in "iuf" or array.ndim != 1 or array.size == 0:
        raise MLPError(
            f"{name} must be a non-empty 1-D array of positive finite numbers, got {values!r}"
        )
    array = array.astype(np.float64, copy=False)
    if not np.all(np.isfinite(array) & (array > 0)):
        raise MLPError(f"{name} must be positive finite numbers, got {array}")
    return array


def _flat(grads: dict) -> np.ndarray:
    # Concatenate every parameter's gradient along one axis, keeping replica axes.
    return np.concatenate(
        [g.reshape((*g.shape[:1], -1)) for _, g in sorted(grads.items())], axis=-1
    )


class LineProbe(NamedTuple):
    """Loss and gradient along ``theta - alpha g`` (Santurkar et al. 2018, section 3.1).

    ``loss_variation``: ``max - min`` of the loss over the step sizes;
    ``gradient_change``: ``max |grad(theta - alpha g) - grad(theta)|`` (l2 over all
    parameters); ``effective_smoothness``: ``max |grad change| / |alpha g|``.
    """

    loss_variation: float
    gradient_change: float
    effective_smoothness: float


def probe_gradient_direction(params: dict, task: TeacherTask, batch_norm: bool, step_sizes):
    """Move along the negative gradient by each step size and measure loss and gradient.

    Parameters
    ----------
    params : dict
        One network (no replica axes).
    task : TeacherTask
    batch_norm : bool
    step_sizes : array_like, shape (S,)
        Positive step sizes ``alpha``.

    Returns
    -------
    LineProbe

    Examples
    --------
    >>> task = make_teacher_task(0, n=32)
    >>> probe = probe_gradient_direction(init_mlp(0, False), task, False, [0.1, 0.2])
    >>> probe.loss_variation > 0 and probe.gradient_change > 0
    True
    """
    step_sizes = _positive_vector(step_sizes, "step_sizes")
    batch_norm = _check_bool(batch_norm, "batch_norm")
    _check_task(task)
    _check_params(params, batch_norm)
    if any(
        np.ndim(params[name]) != len(value.shape)
        for name, value in init_mlp(0, batch_norm).items()
    ):
        raise MLPError("params must be one network, without replica axes")
    return _probe_gradient_direction(params, task, batch_norm, step_sizes)


def _probe_gradient_direction(params, task, batch_norm, step_sizes) -> LineProbe:
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        probe = _probe_measurements(params, task, batch_norm, step_sizes)
    if not np.all(np.isfinite(probe)):
        raise MLPError(
            f"the line probe's measurements are not finite ({probe}): the step sizes "
            f"{step_sizes} are too large (the loss overflows) or too small to move the "
            "parameters (alpha |g| underflows), or the network has diverged"
        )
    return probe


def _probe_measurements(params, task, batch_norm, step_sizes) -> LineProbe:
    loss0, grads0 = _loss_and_gradients(params, task, batch_norm)
    moved = {
        name: p[None] - step_sizes.reshape((-1,) + (1,) * p.ndim) * grads0[name][None]
        for name, p in params.items()
    }
    still = [
        all(np.array_equal(moved[name][i], p) for name, p in params.items())
        for i in range(step_sizes.size)
    ]
    if any(still):
        raise MLPError(
            f"step size {float(step_sizes[still.index(True)])!r} is too small to move the "
            "parameters (theta - alpha g rounds to theta), so the probe would divide 0 by "
            "alpha |g|; use larger step sizes"
        )
    losses, grads = _loss_and_gradients(moved, task, batch_norm)
    g0 = _flat({k: v[None] for k, v in grads0.items()})
    change = np.linalg.norm(_flat(grads) - g0, axis=-1)
    all_losses = np.append(losses, loss0)
    return LineProbe(
        loss_variation=float(all_losses.max() - all_losses.min()),
        gradient_change=float(change.max()),
        effective_smoothness=float(np.max(change / (step_sizes * np.linalg.norm(g0)))),
    )


LEARNING_RATES = 2.0 ** np.arange(-3, 7)  # 1/8 to 64, a factor of 2 apart
BUDGET = 60  # full-batch steps per run
TASK_SIZE = 128  # training examples
PROBE_LR = 0.5
PROBE_MULTIPLIERS = np.geomspace(0.25, 4.0, 5)
PROBE_EVERY = 10


def label_entropy(labels) -> float:
    """Cross-entropy of the best constant predictor: the entropy of the label frequencies.

    Examples
    --------
    Raises
    ------
    ShapeError, UnsupportedDtypeError
        Labels that are not a non-empty 1-D array of class indices in ``[0, CLASSES)``.

    >>> round(label_entropy(np.array([0, 1, 2, 3])), 6)
    1.386294
    """
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.size == 0:
        raise ShapeError(f"labels must be a non-empty 1-D array, got shape {labels.shape}")
    labels = _check_labels(labels, labels.shape[0], CLASSES)
    counts = np.bincount(labels, minlength=CLASSES)
    p = counts[counts > 0] / counts.sum()
    return float(-np.sum(p * np.log(p)))


class Sweep(NamedTuple):
    """Final losses ``(L,)`` over the learning rates, and the thresholds read from them.

    ``largest_finite``: largest learning rate whose loss stayed finite for the budget;
    ``largest_learning``: largest learning rate such that it and every smaller one end
    below the label entropy (they beat the best constant predictor); ``best_loss``: the
    lowest final loss on the grid.
    """

    learning_rates: np.ndarray
    final_losses: np.ndarray
    largest_finite: float
    largest_learning: float
    best_loss: float


def learning_rate_sweep(
    seed: int, batch_norm: bool, *, learning_rates=LEARNING_RATES, steps: int = BUDGET
) -> Sweep:
    """Train from one initialization at every learning rate of a grid; read the thresholds.

    The task is ``make_teacher_task(seed, TASK_SIZE)`` and the initialization
    ``init_mlp(seed + 1, batch_norm)``, so a network with and without batch norm meet the
    same data and the same first-draw weights. The result is a pure function of the
    arguments and is cached (its arrays are read-only), so a chapter that draws a figure
    from the same sweeps its claim verifies does not train twice.

    Examples
    --------
    >>> sweep = learning_rate_sweep(0, True, learning_rates=[0.5, 1e4], steps=5)
    >>> float(sweep.largest_finite)
    0.5
    """
    rates = tuple(float(r) for r in _positive_vector(np.ravel(learning_rates), "learning_rates"))
    seed = check_integer(seed, "seed", minimum=0, error=MLPError)
    steps = check_integer(steps, "steps", minimum=1, error=MLPError)
    return _cached_sweep(seed, _check_bool(batch_norm, "batch_norm"), rates, steps)


@cached_with_calls(maxsize=256)
def _cached_sweep(seed: int, batch_norm: bool, rates: tuple, steps: int) -> Sweep:
    task = make_teacher_task(seed, TASK_SIZE)
    learning_rates = np.array(rates)
    run = train_full_batch(
        task, seed=seed + 1, batch_norm=batch_norm, learning_rates=learning_rates, steps=steps
    )
    final = run.losses[-1]
    finite = np.isfinite(final)
    learning = finite & (final < label_entropy(task.labels))
    # The first failure from below ends the stable range; a lucky success above it does not.
    first_failure = int(np.argmin(learning)) if not learning.all() else learning.size
    learning_rates.setflags(write=False)
    final.setflags(write=False)
    return Sweep(
        learning_rates=learning_rates,
        final_losses=final,
        largest_finite=float(learning_rates[finite].max()) if finite.any() else 0.0,
        largest_learning=float(learning_rates[first_failure - 1]) if first_failure else 0.0,
        best_loss=float(np.nanmin(final)) if finite.any() else float("nan"),
    )


def probe_along_training(
    seed: int, batch_norm: bool, *, lr: float = PROBE_LR, steps: int = BUDGET
) -> LineProbe:
    """Mean of :func:`probe_gradient_direction` every ``PROBE_EVERY`` steps of one run.

    The run is full-batch gradient descent at ``lr`` on the task and initialization of
    :func:`learning_rate_sweep`; the step sizes probed are ``lr * PROBE_MULTIPLIERS``.

    Examples
    --------
    >>> probe = probe_along_training(0, True, steps=10)
    >>> probe.loss_variation > 0
    True
    """
    seed = check_integer(seed, "seed", minimum=0, error=MLPError)
    steps = check_integer(steps, "steps", minimum=1, error=MLPError)
    if check_real(lr, "lr", error=MLPError) <= 0:
        raise MLPError(f"lr must be > 0, got {lr}")
    task = make_teacher_task(seed, TASK_SIZE)
    params = init_mlp(seed + 1, _check_bool(batch_norm, "batch_norm"))
    probes = []
    for t in range(int(steps)):
        if t % PROBE_EVERY == 0:
            probes.append(
                _probe_gradient_direction(params, task, batch_norm, lr * PROBE_MULTIPLIERS)
            )
        _, grads = _loss_and_gradients(params, task, batch_norm)
        params = {name: p - lr * grads[name] for name, p in params.items()}
    return LineProbe(*np.mean(np.array(probes), axis=0).tolist())
