"""scipy.linalg's names symgrad has (as jax.scipy.linalg): solve_triangular, cho_factor, cho_solve, and
the numpy.linalg functions SciPy also offers. They are sg.linalg's (symgrad/linalg.py)."""
from ..linalg import cho_factor, cho_solve, cholesky, det, eigh, inv, lstsq, norm, pinv, qr, solve, solve_triangular, svd

__all__ = ["cho_factor", "cho_solve", "cholesky", "det", "eigh", "inv", "lstsq", "norm", "pinv", "qr", "solve",
           "solve_triangular", "svd"]
