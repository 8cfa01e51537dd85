"""sg.scipy: scipy.special and scipy.stats functions on arrays, traced values and eager tensors, as jax.scipy.

`import symgrad as sg; sg.scipy.special.gammaln(x)` or `from symgrad.scipy.stats import norm`.
"""
from . import special, stats

__all__ = ["special", "stats"]
