"""RMSNorm and LayerNorm in Transformers: the work per token of each, against a block's.

Counted by :mod:`trainable_harness.transformer_cost` at the sizes of LLaMA-7B.
"""

from __future__ import annotations

from trainable_harness.claimable import claim_computation
from trainable_harness.transformer_cost import (
    block_flops_per_token,
    layer_norm_counts,
    rms_norm_counts,
)

__all__ = ["LLAMA_7B", "norm_cost_witness"]

# LLaMA-7B's width and MLP hidden size (Touvron et al. 2023, table 2) and its context.
LLAMA_7B = {"d": 4096, "hidden": 11008, "context": 2048}


@claim_computation
def norm_cost_witness() -> dict:
    """Claim ``c15-norm-cost-001``: work per token of LayerNorm, RMSNorm and a block.

    Counted by :mod:`trainable_harness.transformer_cost` at ``LLAMA_7B`` sizes:
    operations (``ln_ops``, ``rms_ops``), values read (``ln_reads``, ``rms_reads``),
    reductions, the ratio ``rms_ops / ln_ops``, the matrix work of one block
    (``block_flops``), and the share of the block's work taken by its two RMSNorms
    (``rms_share_of_block``).

    Examples
    --------
    >>> result = norm_cost_witness()
    >>> result["ln_ops"], result["rms_ops"]
    (28675, 16387)
    """
    d = LLAMA_7B["d"]
    ln, rms = layer_norm_counts(d), rms_norm_counts(d)
    block = block_flops_per_token(**LLAMA_7B)
    return {
        "ln_ops": ln["total"],
        "rms_ops": rms["total"],
        "ops_ratio": rms["total"] / ln["total"],
        "ln_reads": ln["reads"],
        "rms_reads": rms["reads"],
        "ln_reductions": ln["reductions"],
        "rms_reductions": rms["reductions"],
        "block_flops": block["total"],
        "rms_share_of_block": 2 * rms["total"] / block["total"],
    }
