"""Show a function's own source on a chapter's page (in a ``hide-input`` cell), never a copy.

The docstring is left out: the prose around the cell says what the code does.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable


def function_source(function: Callable) -> str:
    """The source of ``function`` (decorators included) without its docstring, dedented;
    raises as :func:`inspect.getsource` for an object without Python source."""
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
