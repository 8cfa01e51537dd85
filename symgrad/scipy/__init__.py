"""sg.scipy: scipy.special, scipy.stats and scipy.linalg functions on arrays, traced values and eager tensors, as jax.scipy.

`import symgrad as sg; sg.scipy.special.gammaln(x)` or `from symgrad.scipy.stats import norm`.
"""
from . import linalg, special, stats

__all__ = ["linalg", "special", "stats"]
