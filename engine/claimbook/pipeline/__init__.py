"""The build of the book: lock, keys, claims, execution, rendering and publishing.

``python -m claimbook build`` (:mod:`.driver`, what ``make`` runs); each step is a module of
this package, named for it (docs/engine.md, "The build, step by step").
"""
