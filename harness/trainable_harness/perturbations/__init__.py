"""The mistakes the claims exist to catch, as perturbations of the harness.

A registry entry's ``catches`` names functions of this package by their dotted name below
it (``chapter16.sample_variance_batch_moments``). Each is a small function that replaces
*one* named harness function (in every module that binds it) with a mistaken version and
returns nothing. ``python -m claimbook mutate`` (:mod:`claimbook.claims.mutate`) applies
one in a fresh interpreter, recomputes the claim there and records whether it turned red;
no file is ever edited.

Each takes ``patch``, the setter it uses (``setattr`` by default); a test passes
``monkeypatch.setattr`` so the harness is restored after it.
"""
