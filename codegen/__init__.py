"""symgrad's backends, installed as `symgrad.codegen`: numpy_backend (IR -> NumPy source) and llvm (IR -> native code)."""
