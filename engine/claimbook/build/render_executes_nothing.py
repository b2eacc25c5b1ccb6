"""The render executes no notebook: myst-nb's executing clients are replaced by refusals.

The chapters execute before the render, in the build's own kernels
(:mod:`claimbook.build.execute`), and the book's ``_config.yml`` sets
``execute_notebooks: "off"``, so the render shows stored outputs. myst-nb still imports its
two clients that execute, ``direct`` (modes "force" and "auto") and ``cache`` (mode
"cache"), and both import jupyter-cache, which imports SQLAlchemy: about 0.4 s of every
render on this machine, for code a render must never run.

:func:`install` puts stand-ins for those two modules in place before Sphinx loads myst-nb;
constructing either client raises :class:`~claimbook.errors.RenderExecutionError`, which
names the setting. myst-nb's other clients (no execution, the mode this book uses, and
"inline") are its own. In a process that imported myst-nb's clients already, nothing is
replaced.
"""

from __future__ import annotations

import sys
import types

from claimbook.errors import RenderExecutionError

__all__ = ["install"]

_PACKAGE = "myst_nb.core.execute"
# module -> the client class myst-nb's create_client() takes from it, and its modes
_CLIENTS = {
    "direct": ("NotebookClientDirect", '"force" or "auto"'),
    "cache": ("NotebookClientCache", '"cache"'),
}


def _refusal(name: str, modes: str) -> type:
    def refuse(self, *arguments, **options):
        raise RenderExecutionError(
            f"the render was asked to execute a notebook (myst-nb's {name}, for "
            f"execute_notebooks {modes}); chapters execute before it, in the build's kernels: "
            'set execute_notebooks: "off" in _config.yml'
        )

    return type(name, (), {"__init__": refuse, "__doc__": "Refuses to execute (see module)."})


def install() -> None:
    """Put the refusing stand-ins in place, unless myst-nb's clients are imported already."""
    if _PACKAGE in sys.modules:
        return
    for module, (name, modes) in _CLIENTS.items():
        stand_in = types.ModuleType(f"{_PACKAGE}.{module}", __doc__)
        setattr(stand_in, name, _refusal(name, modes))
        sys.modules.setdefault(stand_in.__name__, stand_in)
