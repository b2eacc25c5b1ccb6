"""The names a chapter's code takes from the engine, in one place.

The modules these come from are in every chapter's key (:mod:`claimbook.dependencies`), so
they are kept small.
"""

from claimbook.claims.registry import claim_seed, claim_seeds
from claimbook.claims.verify import claim_status_line, verify_claim
from claimbook.figures import FIGURE_STYLE, FIGURE_WIDTH, PALETTE, glue_figure, save_figure
from claimbook.listings import show_source
from claimbook.numbers import format_value
from claimbook.settings import glue_setting

__all__ = [
    "FIGURE_STYLE",
    "FIGURE_WIDTH",
    "PALETTE",
    "claim_seed",
    "claim_seeds",
    "claim_status_line",
    "format_value",
    "glue_figure",
    "glue_setting",
    "save_figure",
    "show_source",
    "verify_claim",
]
