"""Graph -> Graph rewrites, each in its own module, applied in a listed order by `optimize`."""
from .. import ir
from .cse import cse
from .dce import dce
from .fold import fold
from .fuse import fuse
from .inline import inline_calls
from .loops import merge_and_prune_scans
from .products import transpose_products
from .reroll import reroll
from .scan_products import hoist_scan_products
from .simplify import simplify
from .slabs import merge_slab_sums

# custom-derivative calls inlined first (differentiation is done; no backend has a rule for them); dce
# next: fusing dead code is wasted work; reroll after cse, which takes out what the steps of a
# loop compute alike; merging scans after cse too, which gives a scan and its copy (from reverse mode) the
# same inputs; products taken out of the loops once merged (the copy's stacked operands are the primal's);
# sums of adjacent slabs (reverse mode's adds of each x[t]'s cotangent) merged before fusion sums
# them elementwise; products computed transposed after simplify, which collapses the transposes they read
PIPELINE = (inline_calls, dce, cse, reroll, merge_and_prune_scans, hoist_scan_products, dce, fold, merge_slab_sums,
            simplify, transpose_products, fuse, cse, dce)


def optimize(graph):
    """Run the default pipeline over a graph, and over its loops' bodies and branches."""
    for rewrite in PIPELINE:
        graph = rewrite(graph)
    return ir.map_subgraphs(graph, optimize)
