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

Modules, one job each (every name of the former module ``mlp.py`` is re-exported here):

- :mod:`~trainable_harness.mlp.task` -- the teacher task: :class:`TeacherTask`,
  :func:`make_teacher_task`, ``INPUTS``, ``CLASSES``;
- :mod:`~trainable_harness.mlp.layers` -- the layers and their backward passes:
  :func:`linear_forward`, :func:`relu_forward`, :func:`batch_norm_forward`,
  :func:`softmax_cross_entropy`, their ``*_backward`` and ``BN_EPS``;
- :mod:`~trainable_harness.mlp.network` -- :func:`init_mlp`, :func:`loss_and_gradients`,
  :func:`train_full_batch` (``WIDTH``, ``DIVERGED_LOSS``);
- :mod:`~trainable_harness.mlp.sweeps` -- :func:`learning_rate_sweep`,
  :func:`label_entropy` and the grid ``LEARNING_RATES``, ``BUDGET``, ``TASK_SIZE``,
  ``LEARNING_MARGIN``;
- :mod:`~trainable_harness.mlp.probes` -- :func:`probe_gradient_direction`,
  :func:`probe_along_training`, :func:`scale_invariance_residual`,
  :func:`probe_and_residual` (both from one run) (``PROBE_LR``,
  ``PROBE_MULTIPLIERS``, ``PROBE_EVERY``);
- :mod:`~trainable_harness.mlp.checks` -- the argument checks the others share.

Examples
--------
>>> task = make_teacher_task(seed=0, n=32)
>>> params = init_mlp(seed=1, batch_norm=True)
>>> loss, grads = loss_and_gradients(params, task, batch_norm=True)
>>> sorted(grads) == sorted(params)
True
"""

# Besides __all__, the module's constants and result types are re-exported (noqa: F401):
# chapters and tests read them as ``mlp.<name>``.
from trainable_harness.mlp.layers import (  # noqa: F401
    BN_EPS,
    BatchNormCache,
    batch_norm_backward,
    batch_norm_forward,
    linear_backward,
    linear_forward,
    relu_backward,
    relu_forward,
    softmax_cross_entropy,
    softmax_cross_entropy_backward,
)
from trainable_harness.mlp.network import (  # noqa: F401
    DIVERGED_LOSS,
    WIDTH,
    TrainingRun,
    init_mlp,
    loss_and_gradients,
    train_full_batch,
)
from trainable_harness.mlp.probes import (  # noqa: F401
    PROBE_EVERY,
    PROBE_LR,
    PROBE_MULTIPLIERS,
    LineProbe,
    probe_along_training,
    probe_and_residual,
    probe_gradient_direction,
    scale_invariance_residual,
)
from trainable_harness.mlp.sweeps import (  # noqa: F401
    BUDGET,
    LEARNING_MARGIN,
    LEARNING_RATES,
    TASK_SIZE,
    Sweep,
    label_entropy,
    learning_rate_sweep,
)
from trainable_harness.mlp.task import (  # noqa: F401
    CLASSES,
    INPUTS,
    TeacherTask,
    make_teacher_task,
)

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
    "probe_and_residual",
    "probe_gradient_direction",
    "relu_backward",
    "relu_forward",
    "scale_invariance_residual",
    "softmax_cross_entropy",
    "softmax_cross_entropy_backward",
    "train_full_batch",
]
