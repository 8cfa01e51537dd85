"""LLVM backend: IR graph -> native kernel + CPython entry point, JIT-compiled with llvmlite.

backend.py (lower) drives kernel.py (planning and loops), rules.py (one rule per
primitive; control.py holds those of loops and branches), jobs.py (units of loop work),
operands.py (how values are read), exprs.py (SymPy -> LLVM IR), mathlib.py (vectorizable
transcendentals), callbacks.py (SciPy's C special functions) and zeta.py (Hurwitz zeta, for
polygamma), blas.py (matrix products), pyentry.py (the native argument checks and output
allocation) and jit.py (O3, MCJIT and the on-disk object cache); shared_library.py builds
ahead-of-time libraries.
"""
