"""The harness's version, defined once: the package, ``pyproject.toml`` and pins read it.

A chapter's ``pin = "..."`` literal names the version (the API) the chapter was written
against; see :mod:`claimbook.claims`.
"""

__version__ = "0.2.0"
