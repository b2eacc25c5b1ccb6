"""Show a function's own source on a chapter's page, never a copy of it.

A chapter that wants the reader to see the code behind a number calls the function that
computes it, and shows that function with :func:`show_source` in a cell tagged
``hide-input``: the page shows the source read from the module that defines it, so what
the reader sees is what ran. The docstring is left out, since the prose around the cell
says what the code does.

Examples
--------
>>> def doubled(x):
...     '''Twice x.'''
...     return 2 * x
>>> print(function_source(doubled))
def doubled(x):
    return 2 * x
<BLANKLINE>
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable

__all__ = ["function_source", "show_source"]


def function_source(function: Callable) -> str:
    """The source of ``function`` (decorators included) without its docstring, dedented.

    Raises
    ------
    TypeError, OSError
        As :func:`inspect.getsource` does for an object without Python source.
    """
    source = textwrap.dedent(inspect.getsource(function))
    definition = ast.parse(source).body[0]
    lines = source.splitlines(keepends=True)
    if ast.get_docstring(definition, clean=False) is not None:
        docstring = definition.body[0]
        del lines[docstring.lineno - 1 : docstring.end_lineno]
    return "".join(lines)


def show_source(*functions: Callable):
    """The sources of ``functions`` as one Python code block, for a notebook to display.

    Returns
    -------
    IPython.display.Markdown
        A fenced ``python`` block holding :func:`function_source` of each function, in the
        order given, separated by a blank line.
    """
    from IPython.display import Markdown  # late: only an executing chapter displays

    code = "\n\n".join(function_source(function).rstrip("\n") for function in functions)
    return Markdown(f"```python\n{code}\n```")
