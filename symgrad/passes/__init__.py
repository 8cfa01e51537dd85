"""Graph -> Graph rewrites, each in its own module, applied in a listed order by `optimize`."""
from .cse import cse
from .dce import dce
from .fold import fold
from .fuse import fuse
from .simplify import simplify

PIPELINE = (cse, fold, simplify, fuse, cse, dce)


def optimize(graph):
    """Run the default pipeline over a graph."""
    for rewrite in PIPELINE:
        graph = rewrite(graph)
    return graph
