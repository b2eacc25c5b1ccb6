"""The build of the book: lock, keys, execution, rendering and publishing, in that order.

``python -m claimbook build`` (:mod:`.driver`, what ``make`` runs) takes the build lock
(:mod:`.lock`), plans each chapter by its key (:mod:`.keys`), computes the due claims
(:mod:`.claim_runs`), executes the chapters that need it in parallel workers, one kernel each,
sandboxed where it can be (:mod:`.execute`, :mod:`.sandbox`), renders into a new directory
and publishes it in one rename (:mod:`.render`, :mod:`.site_outcome`), storing the outcome
with the site key and the record of every published file. A tree
unchanged since a clean build is a no-op (:mod:`.noop`).
"""
