"""The computations the book's claims name: a package per chapter, a module per section.

``chapter15`` and ``chapter16`` hold one module per section or worked solution, named for
what it measures; each holds the section's settings, the experiments its chapter calls and
the claim computations that summarize them, so the chapter and its claims share one copy.

Each witness returns a plain dict of result fields (numbers, booleans, or nested dicts of
them), and ``claims/<id>.yaml`` registers one expectation per field. A witness takes no
input except ``seed`` (for claims whose registry derives one, or a set of them, with
``claim_seed``), so the claim's result depends on the instruments alone and never on a
notebook's variables. Only functions marked with
:func:`trainable_harness.claimable.claim_computation` can be named by a registry file's
``compute``; the engine imports the module the name gives, so this package lists nothing.
"""
