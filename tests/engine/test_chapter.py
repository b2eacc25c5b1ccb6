"""A function's own source on the page (engine/claimbook/chapter.py)."""

from collections.abc import Callable

import numpy as np
import pytest

from claimbook.chapter import function_source, show_source
from trainable_harness.witnesses.chapter15.invariance import invariance_witness, shift_change


def documented_helper(x):
    """A docstring
    over two lines."""
    # A comment stays.
    return x


def no_docstring(x):
    return x + 1


def test_the_docstring_is_left_out_and_the_code_kept():
    source = function_source(documented_helper)
    assert source == "def documented_helper(x):\n    # A comment stays.\n    return x\n"
    assert function_source(no_docstring) == "def no_docstring(x):\n    return x + 1\n"


def test_a_shown_function_is_the_function_that_runs():
    namespace = {"np": np, "Callable": Callable}
    exec(function_source(shift_change), namespace)
    x = np.array([1.0, 2.0, 4.0])
    assert namespace["shift_change"](np.exp, x, 1.0) == shift_change(np.exp, x, 1.0)


def test_decorators_are_shown_and_sources_join_into_one_python_block():
    block = show_source(shift_change, invariance_witness).data
    assert block.startswith("```python\ndef shift_change(") and block.endswith("\n```")
    assert "\n\n@claim_computation\ndef invariance_witness() -> dict:\n" in block
    assert '"""' not in block


def test_an_object_without_python_source_is_refused():
    with pytest.raises(TypeError):
        function_source(len)
