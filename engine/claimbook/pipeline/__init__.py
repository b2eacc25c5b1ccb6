"""The build of the book: keys, execution, rendering and publishing, in that order.

``python -m claimbook build`` (what ``make`` runs) does:

1. **Lock** (:mod:`.lock`): one build at a time per checkout; a second one is refused with
   a message naming the holder.
2. **Plan** (:mod:`.keys`): each chapter's *key* is a digest of its code cells, every byte
   of the book's modules its code reaches by imports (:mod:`claimbook.dependencies`), the
   registry entries and artifacts of the claims it verifies, and the locked environment. A
   chapter executes when its key, its executed notebook or one of its outputs differs from
   what its last successful execution recorded.
3. **Execute** (:mod:`.execute`): chapters run with papermill's Python API in parallel worker
   processes, one kernel each, in its own process group and, where bubblewrap works, with
   the book read-only (:mod:`.sandbox`). A failed expectation does not stop a chapter (the
   claim records it).
4. **Render and publish** (:mod:`.render`): Sphinx (through Jupyter Book) renders into a new
   directory that replaces ``_build/html`` in one rename, so the site on disk is always a
   complete one; Sphinx re-reads a page whose content changed, whatever its modification
   time. The outcome (clean, or the warnings) is stored with the *site key* and the SHA-256
   of every published file (:mod:`.site_record`), signed with a digest of all of it; an
   unchanged tree whose site still matches that record repeats the warnings, so a failure
   stays a failure until its cause is fixed, and the claims are judged again every time.

Every command refuses to build a checkout other than the one the engine belongs to (a copy
made with ``cp -a`` carries the original's ``.venv``): :mod:`.checkout`.
"""
