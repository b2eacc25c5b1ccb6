"""The names a chapter's code takes from the engine, and :func:`show_source`.

These modules are in every chapter's key (:mod:`claimbook.dependencies`): they stay small.
"""

import ast
import inspect
import textwrap
from collections.abc import Callable

from claimbook.claims.record import claim_status_line, verify_claim
from claimbook.claims.registry import claim_seed, claim_seeds
from claimbook.figures import FIGURE_STYLE, FIGURE_WIDTH, PALETTE, glue_figure, save_figure
from claimbook.numbers import format_value
from claimbook.settings import glue_setting

__all__ = [
    "FIGURE_STYLE",
    "FIGURE_WIDTH",
    "PALETTE",
    "claim_seed",
    "claim_seeds",
    "claim_status_line",
    "format_value",
    "glue_figure",
    "glue_setting",
    "save_figure",
    "show_source",
    "verify_claim",
]


def function_source(function: Callable) -> str:
    """``function``'s source (decorators included), dedented, without its docstring."""
    source = textwrap.dedent(inspect.getsource(function))
    definition = ast.parse(source).body[0]
    lines = source.splitlines(keepends=True)
    if ast.get_docstring(definition, clean=False) is not None:
        docstring = definition.body[0]
        del lines[docstring.lineno - 1 : docstring.end_lineno]
    return "".join(lines)


def show_source(*functions: Callable):
    """A Markdown ``python`` block of :func:`function_source` of each function, in order."""
    from IPython.display import Markdown  # late: only an executing chapter displays

    code = "\n\n".join(function_source(function).rstrip("\n") for function in functions)
    return Markdown(f"```python\n{code}\n```")
