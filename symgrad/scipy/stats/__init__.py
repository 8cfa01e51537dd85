"""scipy.stats distributions as modules of functions, as jax.scipy.stats: `norm.logpdf(x, loc, scale)`,
with SciPy's argument names and defaults."""
from . import bernoulli, beta, dirichlet, gamma, multivariate_normal, norm, poisson, t

__all__ = ["bernoulli", "beta", "dirichlet", "gamma", "multivariate_normal", "norm", "poisson", "t"]
