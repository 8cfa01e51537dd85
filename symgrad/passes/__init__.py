"""Graph -> Graph rewrites, each in its own module, applied in a listed order by `optimize`."""
from .. import ir
from .cse import cse
from .dce import dce
from .fold import fold
from .fuse import fuse
from .inline import inline_calls
from .loops import merge_and_prune_scans
from .reroll import reroll
from .simplify import simplify
from .slabs import merge_slab_sums

# custom-derivative calls inlined first (differentiation is done; no backend has a rule for them); dce
# next: fusing dead code is wasted work; reroll after cse, which takes out what the steps of a
# loop compute alike; merging scans after cse too, which gives a scan and its copy (from reverse mode) the
# same inputs; sums of adjacent slabs (reverse mode's adds of each x[t]'s cotangent) merged before fusion sums
# them elementwise
PIPELINE = (inline_calls, dce, cse, reroll, merge_and_prune_scans, dce, fold, merge_slab_sums, simplify, fuse, cse,
            dce)


def optimize(graph):
    """Run the default pipeline over a graph, and over its loops' bodies and branches."""
    for rewrite in PIPELINE:
        graph = rewrite(graph)
    return ir.map_subgraphs(graph, optimize)
