"""Graph -> Graph rewrites, each in its own module, applied in a listed order by `optimize`."""
from .dce import dce

PIPELINE = (dce,)


def optimize(graph):
    """Run the default pipeline over a graph."""
    for rewrite in PIPELINE:
        graph = rewrite(graph)
    return graph
