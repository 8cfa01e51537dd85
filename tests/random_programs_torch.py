"""A seeded generator of random straight-line eager tensor programs over PyTorch's method and function surface,
run in symgrad and in PyTorch: every line's values, dtypes and shapes, every tensor's final value (after in-place
writes through views), and the gradient of every leaf (float64 to 1e-10, float32 to a looser bound).

A program is a list of statements over `T` (symgrad or torch), `D` (its float dtype) and `F`: leaves made from
NumPy (edge values, empty and 0-d ones among them), then indexing, views and in-place writes through them,
reductions, dtype promotion with Python scalars, gathers and scatters, `F.` ops; and, drawn from a generator of
their own (`_layers`), layer ops on 4-d and 3-d leaves: convolutions, pools, resizes, norms, class-map losses. The
generator runs each candidate
statement in PyTorch and keeps it only if PyTorch accepts it, so every program is a valid PyTorch program; what
symgrad does differently (a value, a dtype, an error PyTorch does not raise) is a finding.
Run as a script for many more programs than CI's:
    python tests/random_programs_torch.py --count 300 [--start 0] [--float32] [--minimize]
"""
from __future__ import annotations

import argparse
import re
import sys
import traceback

import numpy as np

import symgrad as sg
from random_programs_broad import Mismatch

LINES = 14
SCALARS = ["2", "-3", "0", "0.5", "-1.5", "2.0", "-0.0", "True", "7"]
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -2.0, 0.5])


def leaf_array(i, shape, special):
    """The NumPy array leaf `i` starts from in every library; with `special`, some elements are edge values."""
    rng = np.random.default_rng(1000 + i)
    a = rng.standard_normal(shape)
    if special and a.size:
        picks = rng.integers(a.size, size=max(1, a.size // 4))
        a.flat[picks] = SPECIAL[rng.integers(len(SPECIAL), size=len(picks))]
    return a


def weights(shape):
    """The fixed weights each float tensor's term of the loss is multiplied by."""
    n = int(np.prod(shape, dtype=np.int64))
    return np.cos(np.arange(n) * 0.7 + 0.3).reshape(shape)


# What PyTorch computes there by its kernels' order (an element's place, a vector's length) or what differs on
# purpose (docs/eager.md, "Different from PyTorch"): a line calling one of these on an operand holding such values
# is not drawn. (pattern, which operands: "nan", "nonfinite", "zero", "ties" (a value repeated), "int" or "negative
# int" (or an integer one with a negative literal exponent))
QUIRKS = [
    (re.compile(r"\b(var|std)_mean\("), "nonfinite"),  # Welford's mean: NaN unless the infinity comes last
    (re.compile(r"F\.(elu|celu|selu|hardtanh)\("), "nan"),  # the gradient at NaN: vectorized loop or scalar tail
    (re.compile(r"\.(abs_?|sign)\(|norm\(p=1"), "nan"),  # PyTorch's sign of NaN is 0 (so abs's, |x|'s gradient)
    (re.compile(r"\.(prod|cumprod)\("), "nonfinite"),  # PyTorch's gradient divides the product by x
    (re.compile(r"T\.sinc\("), "int"),  # (or bool) float32's pi n at sinc's zeros: PyTorch's 1e-8, ours float64
    (re.compile(r"\.(var|std)\("), "nonfinite"),  # the gradient at an infinity: NaN here, -inf at the finite ones
    (re.compile(r"\.(topk|kthvalue)\("), "ties"),  # which of tied elements PyTorch's partial sort returns
    (re.compile(r"copysign\("), "nonfinite"),  # PyTorch's gradient divides x by the result: NaN at an infinity
    (re.compile(r"\.addc(mul|div)_?\("), "nonfinite"),  # the product broadcast before (PyTorch) or after: inf - inf
    (re.compile(r"atan2\(|fmod\(|xlogy\("), "zero"),  # gradients at (0, 0), b = 0 and (0, 0): ours against PyTorch's
    (re.compile(r"logcumsumexp\("), "nonfinite"),  # at +inf: PyTorch's exp(x - result) is NaN, ours 1
    (re.compile(r"F\.conv_transpose"), "nonfinite"),  # PyTorch's float32 kernel: +-inf where its float64 one is NaN
    (re.compile(r"\*\*|pow\("), "negative int"),  # integers to negative powers: NumPy's error, PyTorch truncates
]


def _quirk(line, namespace):
    """Whether `line` calls one of QUIRKS' ops where an operand (a tensor it names) holds the values listed."""
    import torch
    for pattern, kind in QUIRKS:
        if not pattern.search(line):
            continue
        for word in set(re.findall(r"[A-Za-z_]\w*", line)):
            value = namespace.get(word)
            if not isinstance(value, torch.Tensor):
                continue
            if kind == "int" and not value.is_floating_point():
                return True
            if kind == "negative int" and not value.is_floating_point() and value.dtype != torch.bool and (
                    "** -" in line or bool((value < 0).any())):
                return True
            if kind == "ties" and value.numel() and value.flatten().unique().numel() < value.numel():
                return True
            if kind == "zero" and bool((value == 0).any()):
                return True
            if kind in ("nan", "nonfinite") and value.is_floating_point() and bool(
                    (value.isnan() if kind == "nan" else ~value.isfinite()).any()):
                return True
    return False


def _run_drawn(lines, namespace):
    """Run a drawn statement's lines in PyTorch's namespace; ValueError where one meets a quirk (not drawn)."""
    for line in lines:
        if _quirk(line, namespace):
            raise ValueError(f"a PyTorch quirk: {line}")
        exec(line, namespace)


# ---------------------------------------------------------------- op templates

class _Pool:
    """The names defined so far, with their torch values (for shapes, dtypes and which may take gradients)."""

    def __init__(self, namespace, rng, hidden=("_",)):
        self.ns, self.rng, self.hidden = namespace, rng, hidden  # (names starting with `hidden` are not picked)

    def names(self, kind=None, min_ndim=0, max_ndim=9, nonempty=False):
        import torch
        out = []
        for name, value in self.ns.items():
            if not isinstance(value, torch.Tensor) or name.startswith(self.hidden):
                continue
            k = "f" if value.is_floating_point() else "b" if value.dtype == torch.bool else "i"
            if (kind is None or k in kind) and min_ndim <= value.ndim <= max_ndim and \
                    (not nonempty or value.numel() > 0):
                out.append(name)
        return out

    def pick(self, kind="f", min_ndim=0, max_ndim=9, nonempty=False):
        names = self.names(kind, min_ndim, max_ndim, nonempty)
        if not names:
            raise LookupError
        return names[self.rng.integers(len(names))]

    def shape(self, name):
        return tuple(self.ns[name].shape)

    def dim(self, name):
        """A random dim of name as a literal (sometimes negative)."""
        nd = max(self.ns[name].ndim, 1)
        d = int(self.rng.integers(nd))
        return d - nd if self.rng.random() < 0.3 else d

    def scalar(self):
        return SCALARS[self.rng.integers(len(SCALARS))]

    def index_literal(self, high, shape):
        """An int64 tensor literal of values in [-high, high) (nonnegative when high is a tuple's) of shape."""
        values = self.rng.integers(0, max(high, 1), size=shape)
        return f"T.tensor({values.tolist()}, dtype=T.int64)"

    def choice(self, options):
        return options[self.rng.integers(len(options))]


def _fresh(name):
    """A fresh tensor computed from name (not a leaf, so in-place writes and views of it are allowed)."""
    return f"({name} * 1)"


def _index(p, x):
    """An index expression for x: ints, slices with steps, negatives, None, Ellipsis, masks, int tensors."""
    shape = p.shape(x)
    parts, rng = [], p.rng
    for size in shape[:rng.integers(1, len(shape) + 1)] if shape else []:
        kind = rng.integers(6)
        if kind == 0 and size:
            parts.append(str(int(rng.integers(-size, size))))
        elif kind == 1:
            start, stop = (int(v) for v in rng.integers(-size - 1, size + 2, size=2))
            step = int(rng.integers(1, 4))
            parts.append(p.choice([f"{start}:{stop}:{step}", f"{start}:", f"::{step}", f":{stop}", ":"]))
        elif kind == 2:
            parts.append("None")
            parts.append(":")
        elif kind == 3 and size:
            parts.append(str(rng.integers(0, size, size=int(rng.integers(1, 4))).tolist()))
        else:
            parts.append(":")
    if rng.random() < 0.25:
        parts.insert(int(rng.integers(len(parts) + 1)), "...")
    if not parts:
        parts = [p.choice(["None", "...", "()"])]
    return ", ".join(parts)


def _reduction(p):
    x = p.pick()
    d = p.dim(x)
    two = f"({d}, {p.dim(x)})"
    kd = p.choice(["", ", keepdim=True", ", keepdim=False"])
    return p.choice([
        f"{x}.sum({d}{kd})", f"{x}.sum(dim={two}{kd})", f"T.sum({x})", f"{x}.mean({d}{kd})", f"{x}.mean({two})",
        f"{x}.prod({d}{kd})", f"{x}.amax({d}{kd})", f"{x}.amin(dim={two}{kd})", f"{x}.max()", f"{x}.min()",
        f"{x}.max({d}{kd})", f"{x}.min(dim={d}{kd})", f"{x}.argmax({d}{kd})", f"{x}.argmin()",
        f"{x}.std({d}{kd})", f"{x}.var({d}, correction=0{kd})", f"{x}.std(dim={two}, unbiased=False)",
        f"{x}.var(unbiased=True)", f"{x}.std({d}, correction=2)", f"{x}.logsumexp({d}{kd})",
        f"T.logsumexp({x}, dim={two})", f"{x}.norm()", f"{x}.norm(dim={d}{kd})", f"{x}.norm(p=1, dim={d})",
        f"T.linalg.vector_norm({x}, ord=3, dim={d})", f"{x}.cumsum({d})", f"{x}.cumprod(dim={d})",
        f"{x}.median()", f"{x}.median({d}{kd})", f"{x}.sort({d})", f"{x}.sort(dim={d}, descending=True)",
        f"{x}.topk(1, {d})", f"{x}.topk(2, dim={d}, largest=False)", f"{x}.kthvalue(1, {d}{kd})",
        f"{x}.sum(axis={d}{kd})", f"{x}.mean(axis={d})", f"{x}.prod(axis={d})", f"{x}.max(axis={d})",
        f"{x}.argmax(axis={d})", f"{x}.all()", f"({x} > 0).any({d})", f"{x}.count_nonzero({d})",
        f"T.var_mean({x}, {d})", f"T.std_mean({x}, dim={d}, correction=0)", f"{x}.nansum({d})",
        f"{x}.cummax({d})", f"{x}.logcumsumexp({d})", f"T.aminmax({x}, dim={d})",
    ])


def _elementwise(p):
    x, y = p.pick("fib"), p.pick("fib")
    s = p.scalar()
    return p.choice([
        f"{x} + {y}", f"{x} - {s}", f"{s} * {x}", f"{x} / {y}", f"{x} / {s}", f"{s} / {x}", f"{x}.detach() // {y}",
        f"T.floor_divide({x}.detach(), {s})", f"{x} % {y}", f"T.remainder({x}, {s})", f"T.fmod({x}, {y})",
        f"{x} ** {p.choice(['2', '3', '0.5', '-1', '0', '2.5'])}", f"T.pow({x}, {y})", f"{s} ** {x}",
        f"T.true_divide({x}, {y})", f"T.div({x}.detach(), {y}, rounding_mode='floor')",
        f"T.div({x}.detach(), {s}, rounding_mode='trunc')", f"{x} * {y}", f"-{x}", f"{x}.abs()", f"{x}.neg()",
        f"T.where({x} > 0, {x}, {y})", f"T.where({p.pick('b')}, {x}, {s})",
        f"{x}.clamp({p.choice(['-0.5', 'min=0', 'max=0.3', '-1, 1', 'min=-0.0'])})",
        f"T.clamp({x}, min={y})", f"{x}.clip(-1, 2)", f"T.maximum({x}, {y})", f"T.minimum({x}, {y})",
        f"T.fmax({x}, {y})", f"{x} == {y}", f"{x} != {s}", f"{x} >= {y}", f"{x}.sign()", f"{x}.sqrt()",
        f"{x}.exp()", f"{x}.log()", f"{x}.log1p()", f"{x}.tanh()", f"{x}.sigmoid()", f"T.relu({x})",
        f"{x}.floor()", f"{x}.round()", f"{x}.trunc()", f"{x}.frac()", f"{x}.reciprocal()", f"{x}.rsqrt()",
        f"T.atan2({x}, {y})", f"{x}.sin()", f"{x}.square()", f"T.hypot({x}, {y})", f"{x}.nan_to_num()",
        f"{x}.isinf()", f"{x}.isnan()", f"T.copysign({x}, {y})", f"{x}.logical_not()",
        f"{x} & {y}", f"{x} | {y}", f"~{x}", f"{x}.float()", f"{x}.double()", f"{x}.long()", f"{x}.int()",
        f"{x}.bool()", f"{x}.to(T.float32)", f"{x}.type(T.int32)", f"{x}.erf()",
        f"{x}.expm1()", f"T.xlogy({x}, {y})", f"{x}.lerp({y}, 0.3)", f"T.lerp({x}, {y}, {y})",
        f"{x}.addcmul({y}, {x}, value=0.5)", f"T.addcdiv({x}, {y}, {x}, value=-2)", f"{x}.masked_fill({x} > 0, {s})",
        f"{x}.add({y}, alpha=2)", f"{x}.sub({y}, alpha=0.5)", f"{x}.mul({s})", f"T.heaviside({x}, {y})",
        f"T.logaddexp({x}, {y})", f"T.sinc({x})", f"{x}.deg2rad()", f"T.isclose({x}, {y})",
    ])


def _shape_ops(p):
    x = p.pick("fib")
    x2 = p.pick("fib", min_ndim=2) if p.names("fib", 2) else x
    d = p.dim(x)
    shape = p.shape(x)
    n = int(np.prod(shape, dtype=np.int64))
    y = p.pick("fib")
    return p.choice([
        f"{x}.reshape(-1)", f"{x}.view(-1)", f"{x}.reshape({n}, 1)", f"{x2}.transpose(0, 1)", f"{x2}.t()",
        f"{x2}.T", f"{x2}.mT", f"{x}.permute({list(np.random.default_rng(n).permutation(len(shape)).tolist())})",
        f"{x}.unsqueeze({d})", f"{x}.squeeze()", f"{x}.squeeze({d})", f"{x}.flatten()", f"{x}.expand(2, *{x}.shape)",
        f"{x}.narrow({d}, 0, 1)", f"{x}.unbind({d})", f"{x}.split(1, {d})", f"{x}.split([1, {x}.shape[{d}] - 1], {d})",
        f"{x}.chunk(2, {d})", f"{x}.unfold({d}, 2, 1)", f"T.cat([{x}, {y}], {d})", f"T.stack([{x}, {y}], {d})",
        f"T.cat(({x}, {x}), dim={d})", f"T.concat([{x}, {x}], axis={d})", f"{x}.flip({d})", f"T.flip({x}, [0, {d}])",
        f"{x}.roll(1, {d})", f"T.roll({x}, -2)", f"{x2}.tril()", f"{x2}.triu(1)", f"T.tril({x2}, -1)",
        f"{x}.diag()", f"T.diagonal({x2}, 0, 0, 1)", f"{x2}.diagonal(offset=1)", f"T.diag_embed({x})",
        f"{x}.movedim({d}, 0)", f"{x}.swapaxes(0, {d})", f"{x}.repeat(2, *[1] * {x}.ndim)", f"{x}.tile((2,))",
        f"{x}.select({d}, 0)", f"{x}.clone()", f"{x}.contiguous()", f"{x}.detach()", f"{x}.flatten(0, {d})",
        f"{x}.unflatten(0, (1, -1))", f"{x}[{_index(p, x)}]", f"{x}[{x} > 0]", f"{x}[{x}.abs() < 1]",
        f"{x}[{p.index_literal(shape[0] if shape else 1, (2,))}]", f"T.atleast_2d({x})", f"{x}.ravel()",
        f"T.broadcast_to({x}, (2,) + tuple({x}.shape))", f"T.broadcast_tensors({x}, {y})", f"{x}.new_zeros(2)",
        f"T.zeros_like({x})", f"T.ones_like({x}, dtype=T.int64)", f"T.full_like({x}, 3)", f"{x}.view({x}.shape)",
        f"{x}.expand_as({y})", f"{x}.reshape_as({y})", f"{x}.type_as({y})", f"{x}.masked_select({x} > 0)",
        f"{x}.nonzero()", f"T.nonzero({x}, as_tuple=True)", f"T.argwhere({x})", f"{x}.numel()", f"{x}.dim()",
    ])


def _gather_ops(p):
    x = p.pick("f", min_ndim=1, nonempty=True)
    shape = p.shape(x)
    d = p.dim(x)
    size = shape[d]
    index_shape = tuple(max(1, s - 1) if k == d % len(shape) else s for k, s in enumerate(shape))
    idx = p.index_literal(size, index_shape)
    flat = p.index_literal(size, (3,))
    src = f"T.ones({index_shape}, dtype={x}.dtype) * 2"
    sel_shape = tuple(3 if k == d % len(shape) else s for k, s in enumerate(shape))
    reduce = ("sum", "prod", "mean", "amax", "amin")[(sum(shape) + d) % 5]  # (no draw: other programs stay the same)
    return p.choice([
        f"{x}.gather({d}, {idx})", f"T.gather({x}, {d}, {idx})", f"T.take_along_dim({x}, {idx}, dim={d})",
        f"{x}.scatter({d}, {idx}, {src})", f"{x}.scatter({d}, {idx}, 1.5)", f"{x}.scatter_add({d}, {idx}, {src})",
        f"T.scatter_add({x}, {d}, {idx}, {x}.narrow({d}, 0, {index_shape[d % len(shape)]}))",
        f"{x}.scatter_reduce({d}, {idx}, {src}, {reduce!r}, include_self={size % 2 == 0})",
        f"{x}.index_select({d}, {flat})",
        f"T.index_select({x}, {d}, {flat})",
        f"{x}.index_add({d}, {flat}, T.ones({sel_shape}, dtype={x}.dtype), alpha=2)",
        f"{x}.index_fill({d}, {flat}, -1)", f"{x}.take({p.index_literal(int(np.prod(shape)), (2, 2))})",
        f"{x}.index_copy({d}, {p.index_literal(size, (1,))}, {x}.narrow({d}, 0, 1) * 3)",
        f"{x}.masked_scatter({x} > 0, {x} * 10)", f"{x}.index_put(({flat},), T.tensor(5.0, dtype={x}.dtype))",
    ])


def _matmul_ops(p):
    x, y = p.pick("f", min_ndim=1), p.pick("f", min_ndim=1)
    x2 = p.pick("f", min_ndim=2) if p.names("f", 2) else x
    return p.choice([
        f"{x} @ {y}", f"T.matmul({x}, {y})", f"{x}.matmul({y}.mT)" if p.ns[y].ndim >= 2 else f"{x} @ {x}",
        f"{x2} @ {x2}.mT", f"T.einsum('ij,kj->ik', {x2}, {x2})", f"T.einsum('...i,...i->...', {x}, {y})",
        f"T.einsum('ij->j', {x2})", f"T.einsum('ii', {x2})", f"T.einsum('i,j->ij', {x}.flatten(), {y}.flatten())",
        f"T.outer({x}.flatten(), {y}.flatten())", f"T.dot({x}.flatten(), {x}.flatten())", f"{x2}.mv({x2}[0])",
        f"T.mm({x2}, {x2}.T)", f"T.bmm({x2}.unsqueeze(0), {x2}.mT.unsqueeze(0))", f"T.tensordot({x2}, {x2}, 2)",
        f"T.inner({x}, {y})", f"T.kron({x}, {y})", f"{x2}.trace()", f"T.cross({x2}.narrow(-1, 0, 3), "
        f"{x2}.narrow(-1, 1, 3), dim=-1)" if p.ns[x2].shape[-1] >= 4 else f"T.vdot({x}.flatten(), {x}.flatten())",
    ])


def _functional(p):
    x = p.pick("f", min_ndim=1)
    d = p.dim(x)
    xi = p.pick("i") if p.names("i") else "T.tensor([0, 2, 1])"
    return p.choice([
        f"F.softmax({x}, dim={d})", f"F.log_softmax({x}, {d})", f"{x}.softmax({d})", f"{x}.log_softmax(dim={d})",
        f"T.softmax({x}, {d}, dtype=T.float64)", f"F.normalize({x}, dim={d})", f"F.normalize({x}, p=1, dim=0)",
        f"F.pad({x}, (1, 2))", f"F.pad({x}, (1, 0), value=-1.0)", f"F.pad({x}.unsqueeze(0), (1, 1), mode='reflect')",
        f"F.pad({x}.unsqueeze(0), (2, 1), mode='replicate')", f"F.pad({x}.unsqueeze(0), (1, 2), mode='circular')",
        f"F.pad({x}, (0, 0, 1, -1))", f"F.one_hot({xi}.clamp(0, 4).abs(), 5)", "F.one_hot(T.tensor([0, 3, 1]))",
        f"F.relu({x})", f"F.leaky_relu({x}, 0.1)", f"F.elu({x})", f"F.gelu({x}, approximate='tanh')", f"F.silu({x})",
        f"F.softplus({x}, beta=2)", f"F.hardtanh({x})", f"F.threshold({x}, 0.1, 20.0)", f"F.logsigmoid({x})",
        f"F.softmin({x}, dim={d})", f"F.glu(T.cat([{x}, {x}], -1), -1)", f"F.dropout({x}, 0.0)",
        f"F.interpolate({x}.reshape(1, 1, -1), scale_factor=2)",
        f"F.interpolate({x}.reshape(1, 1, -1), size=5, mode='linear', align_corners=False)",
        f"F.cosine_similarity({x}, {x}.flip(-1), dim=-1)", f"F.pairwise_distance({x}, {x} * 0.5)",
        f"F.mse_loss({x}, {x}.flip(-1))", f"F.smooth_l1_loss({x}, T.zeros_like({x}))",
        f"F.l1_loss({x}, {x}.flip(-1), reduction='sum')", f"F.huber_loss({x}, {x} * 2, delta=0.5)",
        f"F.layer_norm({x}, {x}.shape[-1:])", f"F.embedding(T.tensor([[0, 1], [1, 0]]), {x}.reshape({x}.shape[0], -1))",
    ])


def _inplace(p):
    """A fresh tensor, then a view of it written in place (statements, not an expression)."""
    x = p.pick("f", min_ndim=1)
    shape = p.shape(x)
    d = p.dim(x)
    v = p.choice(["_b.view(-1)", "_b.reshape(-1)", "_b.transpose(0, -1)", "_b.permute(*reversed(range(_b.ndim)))",
                  f"_b.narrow({d}, 0, 1)", f"_b.unbind({d})[0]", f"_b.split(1, {d})[-1]", f"_b.chunk(2, {d})[0]",
                  f"_b[{_index(p, x)}]", f"_b.unfold({d}, 1, 1)", f"_b.select({d}, -1)",
                  "_b.diagonal()" if len(shape) >= 2 else "_b[::2]", "_b.unsqueeze(0)", "_b.squeeze()",
                  "_b.T" if len(shape) == 2 else "_b.flatten()", "_b.detach()" if p.rng.random() < 0.1 else "_b"])
    y = p.pick("f")
    s = p.scalar()
    write = p.choice([f"_v.add_({y})", f"_v.mul_({s})", f"_v.copy_({y})", f"_v.sub_({y}, alpha=2)",
                      f"_v.div_({s})", "_v.clamp_(-1, 1)", "_v.zero_()", f"_v.fill_({s})", "_v.exp_()",
                      f"_v.masked_fill_(_v > 0, {s})", f"_v[...] = {y}", f"_v[0] = {s}",
                      f"_v.index_put_(({p.index_literal(1, (2,))},), T.tensor(7.0, dtype=_v.dtype), accumulate=True)",
                      "_v.pow_(2)", "_v.neg_()", f"_v.addcmul_({y}, {y}, value=0.1)", "_v.relu_()",
                      f"_v.scatter_add_(0, {p.index_literal(1, (1,))}, T.ones(1, dtype=_v.dtype))", f"_v += {y}",
                      f"_v *= {s}", "_v.abs_()", "_v.sqrt_()", f"_v.lerp_({y}, 0.5)", "_v.fill_diagonal_(2.0)",
                      f"_v.index_add_(0, {p.index_literal(1, (2,))}, "
                      "_v.narrow(0, 0, 1).expand(2, *_v.shape[1:]).clone())"])
    return [f"_b = {_fresh(x)}", f"_v = {v}", write, "{name} = _b"]


# ---------------------------------------------------------------- the layers' ops (widened: drawn apart)

def _weight(p, shape, scale=0.5):
    """A new leaf (a weight) of shape, in the dtype of the layer's input `{x}`: (its name, its statement)."""
    p.made = getattr(p, "made", 0) + 1
    name = f"wp{p.made}"
    return name, [f"{name} = T.tensor(leaf({40 + p.made}, {shape}, False) * {scale}, dtype={{x}}.dtype, "
                  "requires_grad=True)"]


def _conv(p, x, dims):
    """F.conv{dims}d or conv_transpose{dims}d with stride, padding, dilation, groups, a bias or not, and at times
    a padding mode before it: [statements]."""
    shape = p.shape(x)
    channels = shape[1]
    groups = p.choice([1, 1, channels] + ([2] if channels % 2 == 0 else []))
    out = groups * p.choice([1, 2])
    kernel = tuple(int(k) for k in p.rng.integers(1, 4, size=dims))
    transpose = p.rng.random() < 0.35
    w, made = _weight(p, ((channels, out // groups) if transpose else (out, channels // groups)) + kernel)
    b, bias = _weight(p, (out,)) if p.rng.random() < 0.6 else ("None", [])
    stride = p.choice([1, 1, 2] + ([(1, 2)] if dims == 2 else []))
    dilation = p.choice([1, 1, 2] + ([(2, 1)] if dims == 2 else []))
    padding = p.choice([0, 1, 2] + ([(1, 0)] if dims == 2 else []) + ([] if transpose or stride != 1 else ["'same'"]))
    source = x
    if p.rng.random() < 0.3:
        mode = p.choice(["reflect", "replicate", "circular"])
        source = f"F.pad({x}, {(1, 1) * dims}, mode='{mode}')"
    if transpose:
        extra = f", output_padding={p.choice([0, 1])}" if stride != 1 or dilation != 1 else ""
        call = f"F.conv_transpose{dims}d({source}, {w}, {b}, stride={stride}, padding={padding}{extra}, " \
               f"groups={groups}, dilation={dilation})"
    else:
        call = f"F.conv{dims}d({source}, {w}, {b}, stride={stride}, padding={padding}, dilation={dilation}, " \
               f"groups={groups})"
    return [made, bias, [f"{{name}} = {call}"]] if bias else [made, [f"{{name}} = {call}"]]


def _pool(p, x, dims):
    k = int(p.rng.integers(1, 4))
    stride, padding = p.choice([None, 1, 2]), p.choice([0, 0, k // 2])
    return p.choice([
        f"F.max_pool{dims}d({x}, {k}, stride={stride}, padding={padding}, dilation={p.choice([1, 2])}, "
        f"ceil_mode={p.choice([False, True])})",
        f"F.avg_pool{dims}d({x}, {k}, stride={stride}, padding={padding}, ceil_mode={p.choice([False, True])}, "
        f"count_include_pad={p.choice([False, True])})",
        f"F.avg_pool2d({x}, 2, divisor_override=3)" if dims == 2 else f"F.avg_pool1d({x}, 2, ceil_mode=True)",
        f"F.adaptive_avg_pool{dims}d({x}, {p.choice([1, 2, 3] + ([(2, None), (3, 1)] if dims == 2 else []))})",
        f"F.adaptive_max_pool{dims}d({x}, {p.choice([1, 2, 3])})", f"F.lp_pool{dims}d({x}, 2, 2)",
        f"F.max_pool{dims}d({x}, 2, return_indices=True)[0]"])


def _resize(p, x, dims):
    linear = {1: "linear", 2: p.choice(["bilinear", "bicubic"])}[dims]
    size = p.choice([3, 7] if dims == 1 else [(3, 7), (2, 2), (6, 4)])
    return p.choice([
        f"F.interpolate({x}, size={size}, mode='{p.choice(['nearest', 'area'])}')",
        f"F.interpolate({x}, scale_factor={p.choice([2, 0.5, 1.5])}, mode='nearest')",
        f"F.interpolate({x}, size={size}, mode='{linear}', align_corners={p.choice([False, True])})",
        f"F.interpolate({x}, scale_factor={p.choice([2, 1.5])}, mode='{linear}', align_corners=False)",
        f"F.pad({x}, {(1, 2, 0, 1)[:2 * dims]}, mode='{p.choice(['reflect', 'replicate', 'circular'])}')",
        f"F.pad({x}, {(2, 0, 1, 1)[:2 * dims]}, value={p.scalar()})", f"F.pad({x}, {(-1, 1)})",
        f"F.pixel_shuffle({x}, 2)" if dims == 2 else f"F.glu({x}, 1)",
        f"F.pixel_unshuffle({x}, 2)" if dims == 2 else f"{x}.unfold(2, 2, 1)",
        f"F.unfold({x}, 2, padding=1, stride={p.choice([1, 2])})" if dims == 2 else f"{x}.flatten(1)"])


def _norm(p, x, dims):
    """Batch, group, instance, layer and local response norms (weights as leaves; running statistics as tensors
    the batch norm updates in place, compared at the end), dropout in eval mode."""
    channels = p.shape(x)[1]
    w, made_w = _weight(p, (channels,), 1.0)
    b, made_b = _weight(p, (channels,))
    if p.rng.random() < 0.4:
        p.made += 1
        stats = f"wr{p.made}"
        training = p.choice([True, False])
        return [made_w, made_b, [f"{stats} = T.tensor(leaf({60 + p.made}, (2, {channels}), False) ** 2, "
                                 f"dtype={{x}}.dtype)"],
                [f"{{name}} = F.batch_norm({x}, {stats}[0], {stats}[1], {w}, {b}, training={training}, "
                 f"momentum={p.choice([0.1, 0.5])}, eps={p.choice([1e-5, 0.1])})"]]
    groups = p.choice([1, channels] + ([2] if channels % 2 == 0 else []))
    call = p.choice([
        f"F.group_norm({x}, {groups}, {w}, {b}, eps={p.choice([1e-5, 0.1])})",
        f"F.instance_norm({x}, weight={w}, bias={b})", f"F.instance_norm({x})",
        f"F.layer_norm({x}, {x}.shape[-{dims}:])", f"F.layer_norm({x}, {x}.shape[1:], eps=0.1)",
        f"F.dropout({x}, 0.5, training=False)", f"F.dropout{dims}d({x}, 0.3, training=False)",
        f"F.prelu({x}, {w})", f"F.mish({x})", f"F.selu({x})", f"F.celu({x}, 0.5)",
        f"F.softsign({x})", f"F.log_softmax({x}, 1)"])  # (not hardsigmoid: PyTorch's slope is float32's 1/6)
    return [made_w, made_b, [f"{{name}} = {call}"]]


def _layer_loss(p, x, dims):
    """What a loss does with a layer's output: a class map's cross entropy, sort/topk/argmax, NaN masked out."""
    shape = p.shape(x)
    target = p.index_literal(shape[1], (shape[0],) + shape[2:])
    d = p.dim(x)
    return p.choice([
        f"F.cross_entropy({x}, {target}, ignore_index=0, reduction='{p.choice(['mean', 'sum', 'none'])}')",
        f"F.nll_loss(F.log_softmax({x}, 1), {target}, weight=T.linspace(0.5, 1.5, {shape[1]}, dtype={x}.dtype))",
        f"F.cross_entropy({x}, F.softmax({x}.detach() * 2, 1))",
        f"F.cross_entropy({x}, {target}, label_smoothing=0.2)",
        f"{x}.sort({d}, descending=True).values.narrow({d}, 0, 1).sum()", f"{x}.topk(1, dim={d}).values.mean()",
        f"{x}.gather(1, {x}.argmax(1, keepdim=True))", f"{x}.flatten(1).max(1).values",
        f"T.where({x}.isnan(), T.zeros_like({x}), {x})", f"{x}.masked_fill(~{x}.isfinite(), 0.0)",
        f"{x}[{x} > 0].sum()", f"{x}[:, 0] * {x}[:, -1]", f"{x}.cumsum({d}).sum()", f"{x}.cumprod(1).mean()",
        f"F.kl_div(F.log_softmax({x}, 1), F.softmax({x}.detach(), 1), reduction='batchmean')",
        f"F.binary_cross_entropy_with_logits({x}, ({x}.detach() > 0).to({x}.dtype))",
        f"F.mse_loss({x}, T.zeros_like({x}), reduction='sum')", f"F.softmax({x}, {d}) * {x}"])


def _layers(p):
    """A layer's op (its weights made as leaves in statements of their own) on a 4-d (N, C, H, W) or 3-d (N, C, L)
    float tensor: [statements]."""
    x = p.pick("f", min_ndim=3, max_ndim=4, nonempty=True)
    dims = p.ns[x].ndim - 2
    kind = p.choice([_conv, _conv, _norm, _pool, _resize, _layer_loss])
    statements = kind(p, x, dims) if kind in (_conv, _norm) else [[f"{{name}} = {kind(p, x, dims)}"]]
    return [[line.replace("{x}", x) for line in lines] for lines in statements]


def _layer_inputs(special):
    """The layers' inputs: (N, C, H, W) and (N, C, L) leaves (their names hidden from the other families)."""
    return [[f"wx{k} = T.tensor(leaf({30 + k}, {shape}, {special}), dtype=D, requires_grad=True)"]
            for k, shape in enumerate([(2, 4, 5, 6), (2, 2, 7), (1, 3, 4, 4)])]


FAMILIES = [(_elementwise, 4), (_shape_ops, 4), (_reduction, 3), (_gather_ops, 2), (_matmul_ops, 1),
            (_functional, 2), (_inplace, 3)]


# ---------------------------------------------------------------- generation

def _leaves(rng, src, dtype_name):
    """The leaf statements: floats requiring grad (edge values in some), ints, a bool, 0-d and empty ones."""
    special = bool(rng.random() < 0.5)
    shapes = [(3, 4), (4,), (), (2, 3, 4), (0, 3), (1, 4), (3, 1)]
    chosen = [shapes[0]] + [shapes[k] for k in rng.choice(np.arange(1, len(shapes)), size=3, replace=False)]
    for k, shape in enumerate(chosen):
        dtype = "D" if rng.random() < 0.8 else "T.float32"
        src.append([f"x{k} = T.tensor(leaf({k}, {shape}, {special}), dtype={dtype}, requires_grad=True)"])
    src.append(["i0 = T.tensor((leaf(7, (3, 4), False) * 3).round(), dtype=T.int64)"])
    if rng.random() < 0.5:
        src.append([f"i1 = T.tensor([3, -2, 0, 5], dtype={'T.int32' if rng.random() < 0.5 else 'T.int64'})"])
    src.append(["m0 = T.tensor(leaf(8, (3, 4), False) > 0)"])
    if rng.random() < 0.3:
        src.append(["c0 = T.tensor(leaf(9, (3, 4), False), dtype=D)"])  # a float that does not require grad


def _statement(rng, pool, name):
    family = [f for f, w in FAMILIES for _ in range(w)][rng.integers(sum(w for _, w in FAMILIES))]
    made = family(pool)
    if isinstance(made, list):
        return [line.format(name=name) for line in made]
    return [f"{name} = {made}"]


def _names_of(value, name, lib):
    """(name, tensor) pairs a statement's result binds: a tensor, or each tensor of a tuple (values, indices)."""
    if isinstance(value, lib.Tensor):
        return [(name, value)]
    if isinstance(value, tuple) and value and all(isinstance(v, lib.Tensor) for v in value):
        return [(f"{name}[{k}]", v) for k, v in enumerate(value)]
    return []


def generate(seed, dtype="float64"):
    """[statement lines] of a program valid in PyTorch; each statement's lines run together."""
    import torch
    rng = np.random.default_rng(seed)
    statements = []
    _leaves(rng, statements, dtype)
    namespace = _namespace(torch, dtype)
    for lines in statements:
        exec("\n".join(lines), namespace)
    pool = _Pool(namespace, rng, hidden=("_", "w"))
    wide = np.random.default_rng([seed, 35])  # (the layers' draws: the other draws stay those of earlier seeds)
    layers = _Pool(namespace, wide) if wide.random() < 0.6 else None
    if layers is not None:
        _try(statements, namespace, _layer_inputs(bool(wide.random() < 0.3)))
    made, attempts = 0, 0
    while made < LINES and attempts < LINES * 20:
        attempts += 1
        if layers is not None and wide.random() < 0.5:
            _try(statements, namespace, [[line.format(name=f"wv{len(statements)}") for line in lines]
                                         for lines in _layers(layers)])
        name = f"v{made}"
        try:
            lines = _statement(rng, pool, name)
        except LookupError:
            continue
        trial = dict(namespace)
        try:
            _run_drawn(lines, trial)
        except Exception:  # noqa: BLE001 - PyTorch refused the statement (or it meets a quirk): draw another
            continue
        if isinstance(trial.get(name), tuple) and not _names_of(trial[name], name, torch):
            continue
        statements.append(lines)
        namespace.update(trial)
        made += 1
    return statements


def _try(statements, namespace, new):
    """Append the statements `new` (run in PyTorch's namespace) when PyTorch runs them all."""
    trial = dict(namespace)
    try:
        for lines in new:
            _run_drawn(lines, trial)
    except Exception:  # noqa: BLE001 - PyTorch refused (or a quirk): not drawn
        return
    statements.extend(new)
    namespace.update(trial)


def _namespace(lib, dtype):
    return {"T": lib, "D": getattr(lib, dtype), "F": lib.nn.functional, "leaf": leaf_array, "np": np}


def source(statements):
    return "\n".join(line for lines in statements for line in lines) + "\n"


# ---------------------------------------------------------------- running and comparing

def _array(value):
    """(numpy array, dtype name, shape) of a tensor of either library."""
    data = value.detach()
    dtype = str(data.dtype).replace("torch.", "")
    return "tensor", np.array(data.numpy()), dtype, tuple(data.shape)


def run(statements, lib, dtype):
    """[(what, value)] recorded in lib: each statement's results, the final values, the loss and leaf gradients;
    ('raised', error) where a statement or the backward raised."""
    namespace = _namespace(lib, dtype)
    records, bound = [], {}
    for k, lines in enumerate(statements):
        try:
            exec("\n".join(lines), namespace)
        except Exception as e:  # noqa: BLE001 - compared with the other library's outcome
            records.append((f"statement {k}", ("raised", e)))
            return records
        name = lines[0].split(" = ")[0] if len(lines) == 1 else lines[-1].split(" = ")[0]
        value = namespace.get(name)
        if isinstance(value, (int, float, bool)) and not isinstance(value, np.generic):
            records.append((f"{name} (statement {k})", ("number", value)))
            continue
        for label, tensor in _names_of(value, name, lib) if value is not None else []:
            records.append((f"{label} (statement {k})", _array(tensor)))
            bound[label] = tensor
    for label, tensor in bound.items():
        records.append((f"{label} at the end", _array(tensor)))
    terms = [(label, t) for label, t in bound.items() if t.is_floating_point() and t.requires_grad]
    leaves = [(label, t) for label, t in bound.items() if t.is_leaf and t.requires_grad]
    if not terms:
        return records
    try:
        loss = sum((t * lib.tensor(weights(tuple(t.shape)), dtype=t.dtype)).sum() for _, t in terms)
        loss.backward()
    except Exception as e:  # noqa: BLE001
        records.append(("backward", ("raised", e)))
        return records
    records.append(("loss", _array(loss)))
    for label, leaf in leaves:
        records.append((f"{label}.grad", None if leaf.grad is None else _array(leaf.grad)))
    return records


def compare(ours, theirs):
    """Raise Mismatch at the first record that differs (an error both raise is agreement). Values compare to 1e-10
    in float64 and 2e-4 in float32; symgrad's documented NumPy promotion (float64 where PyTorch keeps float32: an
    integer operand of a float op, a float64 0-d tensor with float32) compares values at float32's bound, and so
    does every record after PyTorch's first float32 value (a float64 computed from it differs by its rounding)."""
    loose = False
    for (what, a), (other, b) in zip(ours, theirs):
        if what != other:
            raise Mismatch(f"{what} vs torch's {other}: symgrad {a!r:.300} vs torch {b!r:.300}")
        if a is None or b is None or a[0] != "tensor" or b[0] != "tensor":
            if a is None and b is None or a and b and a[0] == b[0] == "raised" or a == b:
                continue
            raise Mismatch(f"{what}: symgrad {a!r:.300} vs torch {b!r:.300}")
        (_, got, got_dtype, got_shape), (_, want, want_dtype, want_shape) = a, b
        loose = loose or want_dtype == "float32"
        promoted = (got_dtype, want_dtype) == ("float64", "float32")
        if (got_dtype != want_dtype and not promoted) or got_shape != want_shape:
            raise Mismatch(f"{what}: symgrad {got_dtype}{list(got_shape)} vs torch {want_dtype}{list(want_shape)}")
        rtol, atol = (2e-4, 1e-5) if loose else (1e-10, 1e-12)
        if got.dtype.kind == "f":  # signs of infinities count, and NaN equals NaN
            bad = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True) | (np.isinf(got) != np.isinf(want))
        else:
            bad = got != want
        if np.any(bad):
            at = np.flatnonzero(bad)[:4]
            raise Mismatch(f"{what}: at flat {at} symgrad {got.ravel()[at]} vs torch {want.ravel()[at]}")
    if len(ours) != len(theirs):
        raise Mismatch(f"{len(ours)} records vs torch's {len(theirs)}: {(ours + theirs)[-1]!r:.300}")


# PyTorch's errors at a backward whose forward it ran: no derivative (floor_divide, heaviside), or its formula
# subtracts a bool operand (logaddexp(x, mask)), writes floats into an integer operand's gradient (addcdiv(i, x, i))
# or fails an assertion of its own
UNDIFFERENTIABLE = ("not implemented", "with a bool tensor is not supported", "INTERNAL ASSERT FAILED",
                    "can't be cast to the desired output type")


def check(seed, dtype="float64", statements=None):
    """Run program `seed` (or `statements`) in both libraries and compare; the statements run, or None where PyTorch
    cannot differentiate the program."""
    import torch
    from symgrad.eager import tape
    statements = statements or generate(seed, dtype)
    theirs = run(statements, torch, dtype)
    if theirs[-1][0] == "backward" and any(words in str(theirs[-1][1][1]) for words in UNDIFFERENTIABLE):
        return None  # PyTorch cannot differentiate an op the loss reaches: not compared
    tape.start_over()
    ours = run(statements, sg, dtype)
    compare(ours, theirs)
    return statements


def minimize(statements, dtype):
    """Drop statements (last first) while symgrad still disagrees with PyTorch and PyTorch still runs them."""
    import torch

    def fails(trial):
        if any(r[1] and r[1][0] == "raised" for r in run(trial, torch, dtype) if r[1] is not None):
            return False
        try:
            check(None, dtype, trial)
        except Mismatch:
            return True
        except Exception:  # noqa: BLE001
            return False
        return False
    k = len(statements) - 1
    while k >= 0:
        trial = statements[:k] + statements[k + 1:]
        if trial and fails(trial):
            statements = trial
        k -= 1
    return statements


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--float32", action="store_true")
    parser.add_argument("--minimize", action="store_true")
    parser.add_argument("--show", type=int, help="print program SEED and exit")
    options = parser.parse_args(argv)
    dtype = "float32" if options.float32 else "float64"
    if options.show is not None:
        print(source(generate(options.show, dtype)))
        return 0
    failures, invalid, ops, kinds = [], [], {}, {}
    for seed in range(options.start, options.start + options.count):
        statements = generate(seed, dtype)
        try:
            if check(seed, dtype, statements) is None:
                invalid.append(seed)
                continue
        except Exception as e:  # noqa: BLE001 - a finding: print and go on
            failures.append(seed)
            kind = str(e).split("symgrad ", 1)[-1][:100]
            kinds[kind] = kinds.get(kind, 0) + 1
            shown = minimize(statements, dtype) if options.minimize and isinstance(e, Mismatch) else statements
            print(f"--- seed {seed}: {type(e).__name__}: {str(e)[:400]}\n{source(shown)}", flush=True)
            if not isinstance(e, Mismatch):
                traceback.print_exc()
            continue
        for lines in statements:
            for line in lines:
                for word in line.replace("(", " ").replace(".", " .").split():
                    if word.startswith((".", "T.", "F.")) and word[1:].replace("_", "").isalnum():
                        ops[word] = ops.get(word, 0) + 1
    print(f"programs: {options.count}, distinct calls in passing ones: {len(ops)}")
    print("findings by kind:", *(f"  {n} x {k}" for k, n in sorted(kinds.items(), key=lambda item: -item[1])),
          sep="\n")
    print("PyTorch cannot differentiate (not compared):", invalid)
    print("failures:", failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
