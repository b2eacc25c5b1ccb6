"""Checks of the book, beside the engine: what Binder does (:mod:`checks.binder`), the CI
workflow's jobs run locally (:mod:`checks.matrix`) and each claim under the mistakes it names
(:mod:`checks.mutate`). They import from :mod:`claimbook`; the engine never imports them."""
