"""Checks of the book, beside the engine: what Binder does (:mod:`checks.binder`) and the CI
workflow's jobs run locally (:mod:`checks.matrix`). They import from :mod:`claimbook`; the
engine never imports them."""
