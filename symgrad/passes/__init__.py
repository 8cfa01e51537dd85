"""Graph -> Graph rewrites, each in its own module, applied in a listed order by `optimize`."""
from .cse import cse
from .dce import dce
from .fold import fold
from .fuse import fuse
from .simplify import simplify

PIPELINE = (dce, cse, fold, simplify, fuse, cse, dce)  # dce first: fusing dead code is wasted work


def optimize(graph):
    """Run the default pipeline over a graph."""
    for rewrite in PIPELINE:
        graph = rewrite(graph)
    return graph
