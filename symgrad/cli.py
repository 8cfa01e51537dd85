"""The `symgrad` command (also `python -m symgrad`): `symgrad compile FILE.py:FUNCTION --arg ... --out DIR/NAME`.

Argument specs are NAME=DTYPE[d0,d1,...] (DTYPE one of f32, f64, i32, i64, bool; `f64[]` or
`f64` is a scalar). Mistakes (a missing file or function, a malformed spec, an unknown
dtype, a shape too large for memory to address, --arg names that do not match the function's
parameters) exit with status 2 and one line saying what is wrong; an error while tracing or
compiling exits with status 1. `--out DIR/` (or an existing directory) writes DIR/FUNCTION.*;
`--out DIR/NAME.so` writes DIR/NAME.*, as does `--out DIR/NAME`.
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import math
import os
import re
import sys

import numpy as np

from . import dtypes

# --arg dtypes by short name (f32, u8 ...) or NumPy's (float32, uint8 ...)
DTYPES = {**{short: dtype for dtype, short in dtypes.SHORT_NAMES.items()}, **{d.name: d for d in dtypes.SHORT_NAMES}}
SPEC = re.compile(r"^\s*([A-Za-z_]\w*)\s*=\s*([A-Za-z]\w*)\s*(?:\[([^\]]*)\])?\s*$")


class UsageError(Exception):
    """A mistake in the command line: reported in one line, exit status 2."""


def parse_arg_spec(text: str) -> tuple[str, tuple, np.dtype]:
    """'w1=f32[784,128]' -> ('w1', (784, 128), float32)."""
    match = SPEC.match(text)
    if match is None:
        raise UsageError(f"--arg {text!r}: malformed; expected NAME=DTYPE[d0,d1,...], e.g. w=f32[784,128] or s=f64[]")
    name, dtype_name, dims = match.groups()
    if dtype_name not in DTYPES:
        raise UsageError(f"--arg {text!r}: unknown dtype {dtype_name!r}; expected one of "
                         f"{', '.join(dtypes.SHORT_NAMES.values())}")
    shape = ()
    if dims is not None and dims.strip():
        parts = [part.strip() for part in dims.split(",")]
        if parts[-1] == "" and len(parts) > 1:  # a trailing comma, as in (3,)
            parts.pop()
        if not all(part.isdigit() for part in parts):
            raise UsageError(f"--arg {text!r}: malformed shape [{dims}]; dimensions are non-negative integers "
                             "separated by commas")
        shape = tuple(int(part) if len(part) <= 20 else -1 for part in parts)  # -1: more digits than fit
    dtype = np.dtype(DTYPES[dtype_name])
    if min(shape, default=0) < 0 or math.prod(shape) * dtype.itemsize > np.iinfo(np.intp).max:
        raise UsageError(f"--arg {text!r}: shape [{dims}] is too large (its bytes must fit in a "
                         f"{np.iinfo(np.intp).bits}-bit size)")
    return name, shape, dtype


def load_function(target: str):
    """'path/to/file.py:function' -> the function, importing the file as a module."""
    path, colon, name = target.rpartition(":")
    if not colon or not path or not name:
        raise UsageError(f"{target!r}: expected FILE.py:FUNCTION")
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    module_name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None:
        raise UsageError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # so the file can import its neighbours
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    fn = getattr(module, name, None)
    if not callable(fn):
        defined = sorted(k for k, v in vars(module).items()
                         if inspect.isfunction(v) and v.__module__ == module_name and not k.startswith("_"))
        raise UsageError(f"{path} has no function {name!r}" + (f" (it defines: {', '.join(defined)})" if defined else ""))
    return fn


def example_arguments(fn, specs: list) -> list:
    """Zero arrays for fn's parameters, in their order, from --arg specs given in any order."""
    parsed = [parse_arg_spec(text) for text in specs]
    given = {}
    for name, shape, dtype in parsed:
        if name in given:
            raise UsageError(f"--arg {name} given twice")
        given[name] = np.broadcast_to(np.zeros((), dtype), shape)  # zeros of any shape, without the memory
    params = [p for p in inspect.signature(fn).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = [p.name for p in params]
    unknown = [name for name in given if name not in names]
    missing = [p.name for p in params if p.name not in given and p.default is p.empty]
    if unknown or missing:
        problems = ([f"unknown {', '.join(unknown)}"] if unknown else []) + \
                   ([f"missing {', '.join(missing)}"] if missing else [])
        raise UsageError(f"--arg list does not match {fn.__name__}({', '.join(names)}): {'; '.join(problems)}")
    taken = [name for name in names if name in given]
    if taken != names[:len(taken)]:
        raise UsageError(f"--arg: give every parameter of {fn.__name__}({', '.join(names)}) up to the last one "
                         "you give (defaults can only be left out at the end)")
    return [given[name] for name in taken]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="symgrad", description="symgrad: ahead-of-time compile numeric Python.")
    commands = parser.add_subparsers(dest="command", required=True)
    compile_cmd = commands.add_parser(
        "compile", help="compile a function (and its gradient) to a shared library + C header, or a NumPy module",
        description="Compile FILE.py:FUNCTION for fixed argument shapes and dtypes. Writes OUT.so, OUT.h and "
                    "OUT.json (--backend llvm) or OUT.py and OUT.json (--backend numpy); load with symgrad.load(OUT).")
    compile_cmd.add_argument("target", metavar="FILE.py:FUNCTION")
    compile_cmd.add_argument("--arg", action="append", default=[], metavar="NAME=DTYPE[d0,...]",
                             help="one per parameter, e.g. --arg w1=f32[784,128] (dtypes f32 f64 i32 i64 bool)")
    compile_cmd.add_argument("--grad", metavar="NAME,...", help="also export the gradient with respect to these")
    compile_cmd.add_argument("--value-and-grad", action="store_true",
                             help="export value and gradient in one entry point instead of the gradient alone "
                                  "(of the first argument unless --grad names others)")
    compile_cmd.add_argument("--backend", choices=("llvm", "numpy"), default="llvm")
    compile_cmd.add_argument("--cpu", choices=("x86-64-v3", "generic", "host"), default="x86-64-v3",
                             help="llvm: x86-64-v3 (AVX2+FMA, the default), generic (any x86-64, several times "
                                  "slower) or host (this CPU); symgrad.load refuses a CPU lacking the features")
    compile_cmd.add_argument("--out", required=True, metavar="DIR/NAME",
                             help="artifact path (NAME.json and the others are written; a suffix such as NAME.so "
                                  "is dropped); a directory (DIR/ or an existing one) holds FUNCTION.json, ...")
    return parser


def main(argv=None) -> int:
    """Entry point of the `symgrad` console script."""
    args = _parser().parse_args(argv)
    try:
        fn = load_function(args.target)
        example = example_arguments(fn, args.arg)
        grad = None
        if args.grad is not None:
            names = [name.strip() for name in args.grad.split(",") if name.strip()]
            if not names:
                raise UsageError(f"--grad {args.grad!r}: expected NAME[,NAME...]")
            grad = names[0] if len(names) == 1 else names
    except UsageError as err:
        print(f"symgrad compile: error: {err}", file=sys.stderr)
        return 2
    from . import aot
    try:
        artifact = aot.compile(fn, example, grad=grad, value_and_grad=args.value_and_grad, out=args.out,
                               backend=args.backend, cpu=args.cpu, source=args.target)
    except (TypeError, ValueError, RuntimeError) as err:
        print(f"symgrad compile: error: {err}", file=sys.stderr)
        return 1
    for path in artifact.files:
        print(path)
    return 0
