"""A seeded generator of random eager training loops, run in symgrad and in PyTorch: every step's loss, every
.grad and every parameter must agree (float64 to 1e-10, float32 to a looser bound or, past it, as near PyTorch's
float64 run as PyTorch's float32 run is: `compare_to_exact`), since symgrad captures a
repeating step and runs it as one compiled kernel from about the third step.

A program is the Python source of `program(T, D, init, rec)` over `T` (symgrad or torch) and `D` (its float
dtype): a model (nn layers or raw leaves) initialized from NumPy, data shared with NumPy through from_numpy, a
loss, an optimizer (or a manual update) with a scheduler and param groups, and a loop whose steps change at
random: another op, another batch size, requires_grad toggled, Python `if`/`while` on tensor values, in-place
writes to parameters and inputs (NumPy's too), hooks added and removed, retain_grad, retain_graph, create_graph
penalties, a custom autograd.Function, no_grad/enable_grad, detach, two backward calls before a step, zero_grad
both ways, values read mid step, and an in-place write to a saved value (PyTorch's error at backward).
Widened (drawn from a generator of their own, `_Source.wide`): nn.RNN/LSTM/GRU, TransformerEncoderLayer and
MultiheadAttention, an embedding tied to the output layer, padding_idx, a 0-d parameter, ops on the hidden value
(where, cat, stack, einsum, cumsum, gather, index_select, scatter, integer comparisons, writes through views of
it), parameters written through views, layers frozen mid loop, state_dict saved and loaded back (module and
optimizer), more schedulers and lr set by hand, clip_grad_value_, losses with reduction, weights and label
smoothing, empty batches. Widened again (a third generator, `_Source.layers`): conv nets (`_cnn_model`) and a penalty
on the input's gradient (create_graph through every layer).
`rec(name, value)` records what is compared. Optional lines end in `# opt`: the minimizer drops them.
Run as a script for many more loops than CI's:
    python tests/random_programs_eager.py --count 300 [--start 0] [--float32] [--minimize]
"""
from __future__ import annotations

import argparse
import sys
import traceback

import numpy as np

import symgrad as sg
from random_programs_broad import Mismatch

STEPS = 9
ACTIVATIONS = ["T.tanh({})", "T.relu({})", "T.sigmoid({})", "F.gelu({})", "F.softplus({})", "{} * T.sigmoid({})"]


class _Source:
    """Lines at an indentation, and the features a program uses (counted by the script)."""

    def __init__(self):
        self.lines, self.depth, self.features, self.density = [], 1, set(), 1.0
        self.wide = self.layers = None  # the draws of the widened features (apart: the earlier seeds' other draws stay)

    def __call__(self, line, optional=False):
        self.lines.append("    " * self.depth + line + ("  # opt" if optional else ""))

    def wide_chance(self, p):
        """Whether to use a widened feature of probability p (drawn from its own generator)."""
        return self.wide.random() < p * self.density

    def pick(self, options):
        """One of `options`, drawn from the widened features' generator."""
        return options[self.wide.integers(len(options))]

    def chance(self, rng, p):
        """Whether to use a feature of probability p, scaled by the program's density of features."""
        return rng.random() < p * self.density

    def block(self, header, body, optional=True):
        """`header:` then the body's lines one level deeper, all dropped together by the minimizer."""
        self(header + ":", optional)
        for line in body:
            self("    " + line, optional)


def _when(rng):
    """A random condition on `step`: a single step after capture, an alternation, a tail, or a few steps."""
    kind = rng.integers(4)
    if kind == 0:
        return f"step == {int(rng.integers(3, STEPS))}"
    if kind == 1:
        return f"step % 2 == {int(rng.integers(2))}"
    if kind == 2:
        return f"step >= {int(rng.integers(3, STEPS))}"
    picks = sorted({int(s) for s in rng.integers(2, STEPS, size=3)})
    return f"step in {tuple(picks)}"


def _activation(rng, a):
    return ACTIVATIONS[rng.integers(len(ACTIVATIONS))].format(a, a)


# ---------------------------------------------------------------- the model: modules, data and forward lines

def _model(rng, src):
    """Setup lines of a random model and its data; the forward's lines (from `xb` to `h`), the lines each step
    starts with, the line from `h` to `out`, and the data's size."""
    arch = ["mlp", "raw", "conv1d", "conv2d", "bn", "emb", "lstm"][rng.integers(7)]
    if src.wide.random() < 0.35:
        arch = src.pick(["rnn", "attn", "tied", "emb"])
    if src.layers.random() < 0.3:
        arch = "cnn"
    src.features.add("arch=" + arch)
    n_in, hidden, n_out = (int(v) for v in rng.integers(2, 6, size=3))
    if arch == "cnn":
        return _cnn_model(src, n_out)
    forward, each_step, output = [], [], "out = l2(h)"
    if arch == "mlp":
        src(f"l1 = T.nn.Linear({n_in}, {hidden}, dtype=D)")
        src(f"l2 = T.nn.Linear({hidden}, {n_out}, bias={bool(rng.random() < 0.8)}, dtype=D)")
        mods = ["l1", "l2"]
        forward.append(f"h = {_activation(rng, 'l1(xb)')}")
        if rng.random() < 0.4 and hidden > 2:  # (a layer norm of 2 features gives +-1: rounding noise before it)
            src(f"ln = T.nn.LayerNorm({hidden}, elementwise_affine={bool(rng.random() < 0.7)}, dtype=D)")
            mods.insert(1, "ln")
            forward.append("h = ln(h)")
        if rng.random() < 0.3:
            src("drop = T.nn.Dropout(p=0.0)")
            forward.append("h = drop(h)")
        x_shape = (n_in,)
    elif arch == "raw":
        src(f"W = T.from_numpy(init(0, ({n_in}, {hidden})).astype(ND)).requires_grad_()")
        src(f"V = T.tensor(init(1, ({hidden}, {n_out})), dtype=D, requires_grad=True)")
        src(f"c = T.zeros({n_out}, dtype=D, requires_grad=True)")
        src("w_np = W.detach().numpy()")
        mods = None
        src("params = [('W', W), ('V', V), ('c', c)]")
        forward.append(f"h = {_activation(rng, 'xb @ W')}")
        output = "out = h @ V + c"
        x_shape = (n_in,)
    elif arch in ("conv1d", "conv2d"):
        dims = 1 if arch == "conv1d" else 2
        channels, length, kernel = int(rng.integers(1, 3)), int(rng.integers(4, 6)), int(rng.integers(1, 4))
        padding = int(rng.integers(0, 2))
        # stride, dilation, groups and a pooling drawn from what was drawn (the earlier seeds' programs stay theirs)
        more = np.random.default_rng([seed_of(rng), channels, length, kernel, padding, hidden])
        stride, dilation = int(more.choice([1, 1, 2])), int(more.choice([1, 1, 2]))
        dilation = dilation if length + 2 * padding > dilation * (kernel - 1) else 1
        groups = channels if channels > 1 and hidden % channels == 0 and more.random() < 0.4 else 1
        src.features.update({f"conv-stride={stride}", f"conv-dilation={dilation}", f"conv-groups={groups}"})
        src(f"cv = T.nn.Conv{dims}d({channels}, {hidden}, {kernel}, padding={padding}, stride={stride}, "
            f"dilation={dilation}, groups={groups}, dtype=D)")
        size = (length + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1
        pooled = "cv(xb)"
        if size >= 2 and more.random() < 0.4:
            pool = ["MaxPool", "AvgPool"][more.integers(2)]
            src.features.add("pool=" + pool)
            src(f"pool = T.nn.{pool}{dims}d(2)")
            pooled, size = "pool(cv(xb))", size // 2
        src(f"l2 = T.nn.Linear({hidden * size ** dims}, {n_out}, dtype=D)")
        mods = ["cv", "l2"]
        forward.append(f"h = ({_activation(rng, pooled)}).flatten(1)")
        x_shape = (channels,) + (length,) * dims
    elif arch == "bn":
        # no bias before a batch norm: in train mode its gradient is rounding noise, which Adam's step magnifies
        src(f"l1 = T.nn.Linear({n_in}, {hidden}, bias=False, dtype=D)")
        src(f"bn = T.nn.BatchNorm1d({hidden}, dtype=D)")
        src(f"l2 = T.nn.Linear({hidden}, {n_out}, dtype=D)")
        mods = ["l1", "bn", "l2"]
        forward.append(f"h = {_activation(rng, 'bn(l1(xb))')}")
        each_step += [f"if {_when(rng)}:", "    bn.eval()", "else:", "    bn.train()"]
        src.features.add("batchnorm-eval")
        x_shape = (n_in,)
    elif arch == "emb":
        vocab = int(rng.integers(4, 8))
        padding = ", padding_idx=0" if src.wide.random() < 0.5 else ""
        src.features.add("padding_idx" if padding else "emb")
        src(f"emb = T.nn.Embedding({vocab}, {hidden}{padding}, dtype=D)")
        src(f"l2 = T.nn.Linear({hidden}, {n_out}, dtype=D)")
        mods = ["emb", "l2"]
        forward.append(f"h = {_activation(rng, 'emb(xb).mean(1)')}")
        x_shape = ("int", vocab, 3)
    elif arch in ("rnn", "attn", "tied"):
        return _wide_model(src, arch, n_in, hidden, n_out)
    else:
        gru = np.random.default_rng([seed_of(rng), n_in, hidden, 7]).random() < 0.4  # (the earlier seeds' stay)
        src.features.add("cell=" + ("GRUCell" if gru else "LSTMCell"))
        src(f"cell = T.nn.{'GRUCell' if gru else 'LSTMCell'}({n_in}, {hidden}, dtype=D)")
        src(f"l2 = T.nn.Linear({hidden}, {n_out}, dtype=D)")
        mods = ["cell", "l2"]
        forward += [f"hx = T.zeros(xb.shape[0], {hidden}, dtype=D)", "cx = hx", "for t in range(xb.shape[1]):",
                    "    hx = cell(xb[:, t], hx)" if gru else "    hx, cx = cell(xb[:, t], (hx, cx))", "h = hx"]
        x_shape = (3, n_in)
    return _setup_params(src, mods, forward, each_step, output, x_shape, n_out, 3 if arch == "bn" else 1)


def _setup_params(src, mods, forward, each_step, output, x_shape, n_out, min_batch):
    """The params list (names and leaves) over the modules `mods`, initialized from NumPy; a 0-d scale at times."""
    if mods is not None:
        src("model = T.nn.ModuleList([" + ", ".join(mods) + "])")
        src("params = [(f'{k}.{n}', p) for k, m in [" + ", ".join(f"('{m}', {m})" for m in mods)
            + "] for n, p in m.named_parameters()]")
        src("with T.no_grad():")
        src("    for i, (_, p) in enumerate(params):")
        src("        p.copy_(T.from_numpy(init(i, tuple(p.shape)).astype(ND)))")
    if "bn = " in "".join(src.lines):
        each_step.append("rec('bn.running_mean', bn.running_mean)")
    if src.wide_chance(0.2):
        src.features.add("0-d-param")
        src("s = T.tensor(1.1, dtype=D, requires_grad=True)")
        src("params.insert(1, ('s', s))")
        output += " * s"
    # a batch norm of 2 rows in train mode gives +-1 whatever its input: the layers before it get rounding noise
    return forward, each_step, output, x_shape, n_out, min_batch


def _wide_model(src, arch, n_in, hidden, n_out):
    """The widened models: nn.RNN/LSTM/GRU, a TransformerEncoderLayer or MultiheadAttention, an embedding tied to
    the output layer (one parameter used twice)."""
    forward, each_step, output = [], [], "out = l2(h)"
    if arch == "rnn":
        kind, layers = src.pick(["RNN", "LSTM", "GRU"]), int(src.pick([1, 1, 2]))
        batch_first, bidirectional = bool(src.pick([True, False])), bool(src.pick([True, False, False]))
        src.features.update({"rnn=" + kind, f"rnn-layers={layers}"} | ({"bidirectional"} if bidirectional else set()))
        src(f"rnn = T.nn.{kind}({n_in}, {hidden}, num_layers={layers}, batch_first={batch_first}, "
            f"bidirectional={bidirectional}, dtype=D)")
        src(f"l2 = T.nn.Linear({hidden * (2 if bidirectional else 1)}, {n_out}, dtype=D)")
        mods = ["rnn", "l2"]
        forward.append("seq, _ = rnn(xb)" if batch_first else "seq, _ = rnn(xb.transpose(0, 1).contiguous())")
        forward.append("h = seq[:, -1]" if batch_first else "h = seq[-1]")
        return _setup_params(src, mods, forward, each_step, output, (3, n_in), n_out, 1)
    if arch == "attn":
        width, heads = 4, int(src.pick([1, 2]))
        src(f"l1 = T.nn.Linear({n_in}, {width}, dtype=D)")
        # no biases: the key's has no gradient (softmax ignores it) but rounding noise, which Adam's step magnifies
        if src.wide.random() < 0.5:
            src.features.add("TransformerEncoderLayer")
            src(f"enc = T.nn.TransformerEncoderLayer({width}, {heads}, dim_feedforward={hidden + 2}, dropout=0.0, "
                f"activation='{src.pick(['relu', 'gelu'])}', batch_first=True, "
                f"norm_first={bool(src.pick([True, False]))}, bias=False, dtype=D)")
            forward.append("h = enc(l1(xb)).mean(1)")
        else:
            src.features.add("MultiheadAttention")
            src(f"enc = T.nn.MultiheadAttention({width}, {heads}, bias=False, batch_first=True, dtype=D)")
            forward += ["q = T.tanh(l1(xb))", "h, attn = enc(q, q, q)", "h = h.mean(1) + attn.sum((1, 2)).unsqueeze(1)"]
        src(f"l2 = T.nn.Linear({width}, {n_out}, dtype=D)")
        return _setup_params(src, ["l1", "enc", "l2"], forward, each_step, output, (3, n_in), n_out, 1)
    vocab = n_out + 2
    padding = ", padding_idx=0" if src.wide.random() < 0.5 else ""
    src.features.add("tied-weights")
    src(f"emb = T.nn.Embedding({vocab}, {hidden}{padding}, dtype=D)")
    src(f"l1 = T.nn.Linear({hidden}, {hidden}, dtype=D)")
    forward.append("h = T.tanh(l1(emb(xb).mean(1)))")
    return _setup_params(src, ["emb", "l1"], forward, each_step, "out = (h @ emb.weight.t())[:, :" + str(n_out) + "]",
                         ("int", vocab, 3), n_out, 1)


def _cnn_model(src, n_out):
    """A conv net drawn from its own generator (src.layers): Conv2d with stride, padding, dilation, groups and a
    padding mode; a batch norm switched between train and eval, or a group, instance or layer norm; at times a
    ConvTranspose2d, a pooling, an upsampling, a Dropout kept in eval mode; an adaptive pooling to the output
    layer; and at some steps a validation pass under model.eval() and no_grad."""
    g = src.layers
    pick = lambda options: options[g.integers(len(options))]  # noqa: E731
    channels, size, width = int(g.integers(1, 4)), int(g.integers(5, 8)), int(pick([2, 4, 6]))
    groups = pick([1, channels]) if width % channels == 0 else 1
    stride, dilation, padding = pick([1, 1, 2, (1, 2)]), pick([1, 1, 2]), pick([0, 1, 1, (1, 0)])
    mode, kernel = pick(["zeros", "zeros", "reflect", "replicate", "circular"]), int(g.integers(1, 4))
    src.features.update({"cnn-conv", f"padding_mode={mode}", f"cnn-groups={groups > 1}"})
    norm = pick(["BatchNorm2d", "BatchNorm2d", "GroupNorm", "InstanceNorm2d", "none"])
    # (a norm over few values gives +-1 whatever its input: the conv learns rounding noise; so does a conv's bias
    # before a norm that takes each channel's mean away)
    pads, strides = (padding, padding) if isinstance(padding, int) else padding, \
        (stride, stride) if isinstance(stride, int) else stride
    area = np.prod([(size + 2 * p - dilation * (kernel - 1) - 1) // s + 1 for p, s in zip(pads, strides)])
    norm = norm if area >= 4 else "none"
    src(f"cv = T.nn.Conv2d({channels}, {width}, {kernel}, stride={stride}, padding={padding}, dilation={dilation}, "
        f"groups={groups}, padding_mode='{mode}', bias={norm == 'none' and bool(g.random() < 0.7)}, dtype=D)")
    src.features.add("norm=" + norm)
    mods, body, each_step = ["cv"], ["h = cv(xb)"], []
    if norm == "BatchNorm2d":
        src(f"bn = T.nn.BatchNorm2d({width}, momentum={pick([0.1, 0.5, None])}, dtype=D)")
        each_step += [f"if {_when(g)}:", "    bn.eval()", "else:", "    bn.train()"]
    elif norm == "GroupNorm":
        src(f"gn = T.nn.GroupNorm({pick([1, 2, width])}, {width}, dtype=D)")
    elif norm == "InstanceNorm2d":
        src(f"gn = T.nn.InstanceNorm2d({width}, affine=True, dtype=D)")
    if norm != "none":
        mods.append("bn" if norm == "BatchNorm2d" else "gn")
        body.append(f"h = {mods[-1]}(h)")
    body.append(f"h = {_activation(g, 'h')}")
    if g.random() < 0.4:
        src.features.add("ConvTranspose2d")
        src(f"up = T.nn.ConvTranspose2d({width}, {width}, {int(g.integers(1, 4))}, stride={pick([1, 2])}, "
            f"padding={pick([0, 1])}, groups={pick([1, 2])}, dtype=D)")
        mods.append("up")
        body.append("h = up(h)")
    extra = pick(["T.nn.functional.max_pool2d(h, 2, stride=1, padding=1)", "T.nn.functional.avg_pool2d(h, 3, "
                  "stride=1, padding=1, count_include_pad=False)", "T.nn.functional.interpolate(h, scale_factor=2, "
                  "mode='nearest')", "T.nn.functional.interpolate(h, size=(5, 4), mode='bilinear', "
                  "align_corners=False)", "T.nn.functional.pad(h, (1, 0, 0, 1), mode='replicate')", None])
    if extra is not None:
        src.features.add("cnn-op=" + extra.split("(")[0].split(".")[-1])
        body.append(f"h = {extra}")
    if g.random() < 0.5:
        src.features.add("dropout-eval")
        src("drop = T.nn.Dropout(0.5)")
        src("drop.eval()")
        body.append("h = drop(h)")
    out_size = pick([(1, 1), (2, 2), (2, 1)])
    src(f"pool = T.nn.AdaptiveAvgPool2d({out_size})")
    body.append("h = pool(h).flatten(1)")
    src(f"l2 = T.nn.Linear({width * out_size[0] * out_size[1]}, {n_out}, dtype=D)")
    mods.append("l2")
    src("def features(xb):")
    for line in body:
        src("    " + line)
    src("    return h")
    if g.random() < 0.4:
        src.features.add("validation-pass")
        each_step += [f"if {_when(g)}:", "    model.eval()", "    with T.no_grad():",
                      "        rec('validation', l2(features(X[:3])))", "    model.train()"]
        each_step += ["    drop.eval()"] if "drop = " in "".join(src.lines) else []
    return _setup_params(src, mods, ["h = features(xb)"], each_step, "out = l2(h)", (channels, size, size), n_out, 2)


def _input_penalty(src):
    """At times a penalty on the gradient of the loss with respect to the input (create_graph: double backward
    through every layer), as WGAN-GP's."""
    src.features.add("input-gradient-penalty")
    src.block(f"if {_when(src.layers)}", ["gx, = T.autograd.grad(loss, [xb], create_graph=True)",
                                           "loss = loss + 0.1 * (gx ** 2).sum()"])


def seed_of(rng) -> int:
    """A number fixed by the generator's seed, read without drawing (so later draws stay what they were)."""
    return int(rng.bit_generator.seed_seq.entropy)


def _data(rng, src, x_shape, n_out, loss):
    """The data arrays (shared with NumPy through from_numpy) for inputs and targets."""
    rows = 8
    if x_shape[0] == "int":
        src(f"x_np = (init(90, ({rows}, {x_shape[2]})) * 1000).astype(np.int64) % {x_shape[1]}")
    else:
        src(f"x_np = init(90, {(rows,) + x_shape}).astype(ND)")
    src("X = T.from_numpy(x_np)")
    if loss in ("cross_entropy", "nll"):
        src(f"y_np = (init(91, ({rows},)) * 1000).astype(np.int64) % {n_out}")
        if loss == "cross_entropy" and rng.random() < 0.6:
            src(f"y_np[{int(rng.integers(rows))}] = IGNORE")
            src.features.add("ignore_index")
    elif loss == "bce":
        src(f"y_np = (init(91, ({rows}, {n_out})) > 0).astype(ND)")
    else:
        src(f"y_np = init(91, ({rows}, {n_out})).astype(ND)")
    src("Y = T.from_numpy(y_np)")


LOSSES = {"mse": "F.mse_loss({}, {})", "cross_entropy": "F.cross_entropy({}, {}, ignore_index=IGNORE)",
          "nll": "F.nll_loss(F.log_softmax({}, dim=1), {})", "bce": "F.binary_cross_entropy_with_logits({}, {})"}


def _optimizer(rng, src):
    """The optimizer (over one or two param groups) and scheduler, or None for a manual update."""
    kind = ["SGD", "SGD-nesterov", "Adam", "AdamW", "RMSprop", "Adagrad", "manual"][rng.integers(7)]
    src.features.add("optim=" + kind)
    if kind == "manual":
        return None
    lr = float(np.round(rng.uniform(0.01, 0.2), 3))
    extra = {"SGD": f", momentum={float(np.round(rng.uniform(0, 0.9), 2))}",
             "SGD-nesterov": f", momentum={float(np.round(rng.uniform(0.1, 0.9), 2))}, nesterov=True",
             "Adam": f", betas=(0.8, 0.95), weight_decay={float(rng.choice([0.0, 0.01]))}",
             "AdamW": ", weight_decay=0.05", "RMSprop": f", momentum={float(rng.choice([0.0, 0.5]))}, "
             f"centered={bool(rng.random() < 0.5)}", "Adagrad": ""}[kind]
    name = kind.split("-")[0]
    if rng.random() < 0.4:
        src.features.add("param-groups")
        groups = "[{'params': [p for _, p in params[:2]]}, {'params': [p for _, p in params[2:]], " \
                 f"'lr': {lr / 2}}}]"
    else:
        groups = "[p for _, p in params]"
    src(f"opt = T.optim.{name}({groups}, lr={lr}{extra})")
    scheduler = rng.integers(5)
    if scheduler:
        src.features.add("scheduler")
        src("sched = " + ["", "T.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)",
                          "T.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)",
                          "T.optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0 / (1.0 + e))",
                          "T.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4)"][scheduler])
    return name


# ---------------------------------------------------------------- the program

def generate(seed):
    """(source of program(T, D, init, rec), the features it uses)."""
    rng = np.random.default_rng(seed)
    src = _Source()
    src.density = float(rng.choice([0.3, 1.0, 1.6]))  # a quiet loop steadies: its steps run deferred
    src.wide = np.random.default_rng([seed, 34])
    src.layers = np.random.default_rng([seed, 35])  # (the conv nets' draws and the input's gradient penalty)
    src("import copy")
    src("F = T.nn.functional")
    src("ND = np.float64 if D == T.float64 else np.float32")
    src("IGNORE = 1")
    forward, each_step, output, x_shape, n_out, min_batch = _model(rng, src)
    loss_kind = list(LOSSES)[rng.integers(len(LOSSES))]
    src.features.add("loss=" + loss_kind)
    _data(rng, src, x_shape, n_out, loss_kind)
    optimizer = _optimizer(rng, src)
    _wide_scheduler(src, optimizer)
    src("hook = None")
    if src.chance(rng, 0.25):
        src.features.add("autograd.Function")
        src("class Cube(T.autograd.Function):")
        src("    @staticmethod")
        src("    def forward(ctx, a):")
        src("        ctx.save_for_backward(a)")
        src("        return a * a * a * 0.5")
        src("    @staticmethod")
        src("    def backward(ctx, g):")
        src("        a, = ctx.saved_tensors")
        src("        return g * a * a * 1.5")
    else:
        src("Cube = None")
    batch = int(rng.integers(max(2, min_batch), 5))
    src(f"for step in range({STEPS}):")
    src.depth = 2
    src(f"B = {batch}")
    for line in each_step:
        src(line)
    if src.chance(rng, 0.5):
        src.features.add("batch-size-change")
        src.block(f"if {_when(rng)}", [f"B = {int(rng.integers(min_batch, 5))}"])
    if "bn = " not in "".join(src.lines) and src.wide_chance(0.08):
        src.features.add("empty-batch")
        src.block(f"if {_when(src.wide)}", ["B = 0"])
    _between_steps(rng, src, x_shape[0] == "int")
    _wide_between_steps(src, optimizer)
    set_to_none = rng.random() < 0.5
    micro = src.chance(rng, 0.3)
    if micro:
        src.features.add("accumulate")
        src(f"for micro in range(2 if {_when(rng)} else 1):")
    else:
        src("for micro in range(1):")
    src.depth = 3
    src("xb, yb = X[micro * 4:micro * 4 + B], Y[micro * 4:micro * 4 + B]")
    penalty = x_shape[0] != "int" and src.layers.random() < 0.5
    penalty_at = len(src.lines)
    for line in forward:
        src(line)
    _middle(rng, src)
    _wide_middle(src)
    src(output)
    if src.chance(rng, 0.3):
        src.features.add("while")
        c = float(np.round(rng.uniform(0.2, 2.0), 2))
        src("k = 0")
        src.block(f"while k < 3 and out.abs().max().item() > {c}", ["out = out * 0.7", "k += 1"])
    src("loss = " + _wide_loss(src, loss_kind, n_out).format("out", "yb"))
    _loss_terms(rng, src)
    # (not with retain_grad: symgrad's autograd.grad fills retained grads, PyTorch's does not, fixed apart; nor
    # through attention, whose flash kernel PyTorch cannot differentiate twice on the CPU; nor after an in-place
    # write to a saved value, whose error would come from autograd.grad, outside the `try`)
    if penalty and not any(text in "".join(src.lines) for text in ("retain_grad", "enc = ", "h2.add_")):
        src.lines.insert(penalty_at, "    " * src.depth + "xb = xb.detach().requires_grad_()")
        _input_penalty(src)
    _backward(rng, src)
    src.depth = 2
    _update(rng, src, optimizer, set_to_none)
    return "def program(T, D, init, rec):\n" + "\n".join(src.lines) + "\n", src.features


def _between_steps(rng, src, integer_data):
    """At random steps before the forward: in-place writes to parameters and inputs, requires_grad toggled,
    hooks on a parameter added and removed, the data's NumPy array written."""
    if src.chance(rng, 0.4):
        src.features.add("param-inplace")
        write = ["with T.no_grad(): params[0][1].mul_(0.97)", "params[1][1].data.mul_(1.05)",
                 "with T.no_grad(): params[0][1].sub_(0.01)", "with T.no_grad(): params[-1][1][0] = 0.25",
                 "with T.no_grad(): params[0][1].view(-1)[:2].add_(0.1)"][rng.integers(5)]
        src.block(f"if {_when(rng)}", [write])
    if src.chance(rng, 0.4):
        src.features.add("input-inplace")
        writes = ["x_np[1] = x_np[0][::-1]", "x_np[:3] = x_np[3:6]", "X[0] = X[2]", "X[1:3] = X[4:6].clone()"]
        writes += [] if integer_data else ["x_np[:2] *= -0.5", "X[1:3].mul_(0.5)", "X[0, 0] += 1.0"]
        src.block(f"if {_when(rng)}", [writes[rng.integers(len(writes))]])
    if src.chance(rng, 0.3):
        src.features.add("numpy-param-write")
        src.block(f"if {_when(rng)}", ["params[0][1].detach().numpy()[...] *= 0.9"])
    if src.chance(rng, 0.3):
        src.features.add("requires_grad-toggle")
        k = int(rng.integers(2, STEPS - 1))
        src.block(f"if step == {k}", ["params[1][1].requires_grad_(False)"])
        src.block(f"if step == {k + int(rng.integers(1, 3))}", ["params[1][1].requires_grad_(True)"])
    if src.chance(rng, 0.3):
        src.features.add("param-hook")
        k = int(rng.integers(1, STEPS - 1))
        src.block(f"if step == {k}", [f"hook = params[0][1].register_hook(lambda g: g * {1 + k / 10})"])
        src.block(f"if step == {k + int(rng.integers(1, 4))} and hook is not None", ["hook.remove()"])


def _middle(rng, src):
    """At random steps, on the hidden value h: a custom Function, hooks (one changing per step), retain_grad,
    a detached term, an op under enable_grad inside no_grad, a value read mid step."""
    if "class Cube" in "".join(src.lines) and rng.random() < 0.8:
        src.block(f"if {_when(rng)}", ["h = Cube.apply(h)"])
    if src.chance(rng, 0.3):
        src.features.add("tensor-hook")
        src.block(f"if {_when(rng)}", ["h.register_hook(lambda g, s=step: g * (1 + s / 20))"])
    if src.chance(rng, 0.3):
        src.features.add("retain_grad")
        src.block(f"if {_when(rng)}", ["h.retain_grad()", "kept = h"])
        src("else:", True)
        src("    kept = None", True)
    if src.chance(rng, 0.3):
        src.features.add("extra-op")
        src.block(f"if {_when(rng)}", [f"h = h + {_activation(rng, 'h')} * 0.3"])
    if src.chance(rng, 0.2):
        src.features.add("detach")
        src.block(f"if {_when(rng)}", ["h = h * (1 + h.detach().abs().mean())"])
    if src.chance(rng, 0.2):
        src.features.add("no_grad/enable_grad")
        src.block(f"if {_when(rng)}", ["with T.no_grad():", "    with T.enable_grad():", "        h = h * 1.1",
                                       "    rec('no_grad-mean', h.mean())"])
    if src.chance(rng, 0.3):
        src.features.add("read-mid-step")
        src.block(f"if {_when(rng)}", [["rec('mid', h.sum().item())", "rec('mid', h.detach().numpy().copy())",
                                        "rec('mid', len(str(h.detach())) > 0)"][rng.integers(3)]])
    if src.chance(rng, 0.2):
        src.features.add("inplace-saved-error")
        src.block(f"if {_when(rng)}", ["h2 = h.exp()", "h = h2 * h", "h2.add_(1.0)"])


def _loss_terms(rng, src):
    """Python `if` on the loss's value, an extra term at some steps, a create_graph gradient penalty."""
    if src.chance(rng, 0.4):
        src.features.add("if-item")
        c = float(np.round(rng.uniform(0.1, 1.5), 2))
        src.block(f"if loss.item() > {c}", ["loss = loss * 0.5"])
    if src.chance(rng, 0.3):
        src.features.add("extra-term")
        src.block(f"if {_when(rng)}", ["loss = loss + 0.01 * (out ** 2).mean()"])
    if src.chance(rng, 0.2):
        src.features.add("create_graph")
        src.block(f"if {_when(rng)} and params[-1][1].requires_grad",
                  ["gp, = T.autograd.grad(loss, [params[-1][1]], create_graph=True)",
                   "loss = loss + 0.1 * (gp ** 2).sum()"])


def _backward(rng, src):
    """loss.backward(), sometimes twice through a retained graph; an error PyTorch raises is recorded."""
    # (not with padding_idx: symgrad's mask of the padding positions is the forward's, PyTorch's the indices' as
    # NumPy left them; nor with batch_first, whose transposed input PyTorch's projection copies: docs/eager.md)
    # (nor with an input that requires grad: NumPy's write changes the leaf PyTorch saved, unseen by its version)
    if src.chance(rng, 0.25) and not any(text in "".join(src.lines) for text in ("padding_idx", "batch_first=True",
                                                                                 "xb.detach().requires_grad_()")):
        src.features.add("numpy-write-before-backward")
        src.block(f"if {_when(rng)}", ["x_np[1] = x_np[0][::-1]"])
    double = src.chance(rng, 0.2)
    if double:
        src.features.add("retain_graph")
    src("try:")
    if double:
        src(f"    if {_when(rng)}:", True)
        src("        loss.backward(retain_graph=True)", True)
        src("        (loss * 0.5).backward()", True)
        src("    else:", True)
        src("        loss.backward()", True)
    else:
        src("    loss.backward()")
    src("except RuntimeError as e:")
    src("    rec('error', 'modified by an inplace operation' in str(e))")
    src("    for _, p in params:")
    src("        p.grad = None")
    src("rec('loss', loss)")
    src("if 'kept' in dir() and kept is not None:", True)
    src("    rec('retained', kept.grad)", True)


def _update(rng, src, optimizer, set_to_none):
    """The update (optimizer step and scheduler, or manual), what is compared, zero_grad."""
    if np.random.default_rng([seed_of(rng), 11]).random() < 0.3:  # (drawn apart: the other draws stay as they were)
        src.features.add("clip_grad_norm_")
        src.block(f"if {_when(np.random.default_rng([seed_of(rng), 12]))}",
                  ["rec('norm', T.nn.utils.clip_grad_norm_([p for _, p in params], 0.5))"])
    if src.wide_chance(0.2):
        src.features.add("clip_grad_value_")
        src.block(f"if {_when(src.wide)}", ["T.nn.utils.clip_grad_value_([p for _, p in params], 0.1)"])
    for line in ["for n, p in params:", "    rec(n + '.grad', p.grad)"]:
        src(line)
    if optimizer is not None and src.wide_chance(0.3):
        src.features.add("lr-by-hand")
        src.block(f"if {_when(src.wide)}", ["for g in opt.param_groups:", "    g['lr'] = g['lr'] * 0.5"])
    if optimizer is None:
        src("with T.no_grad():")
        src("    for _, p in params:")
        src("        if p.grad is not None:")
        src("            p -= 0.05 * p.grad")
    else:
        src("opt.step()")
        if "ReduceLROnPlateau" in "".join(src.lines):
            src("sched.step(loss.item())")
        elif "sched =" in "".join(src.lines):
            src("sched.step()")
    for line in ["for n, p in params:", "    rec(n, p)"]:
        src(line)
    if optimizer is None:
        src("for _, p in params:")
        src("    if p.grad is not None:")
        src("        p.grad.zero_()" if not set_to_none else "        p.grad = None")
    else:
        src(f"opt.zero_grad(set_to_none={set_to_none})")
    if src.chance(rng, 0.3):
        src.features.add("zero_grad-both")
        src.block(f"if {_when(rng)}", [f"opt.zero_grad(set_to_none={not set_to_none})" if optimizer else
                                       "params[0][1].grad = None"])


# ---------------------------------------------------------------- the widened features (their own generator)

SCHEDULERS = ["MultiStepLR(opt, milestones=[2, 5], gamma=0.3)", "LinearLR(opt, start_factor=0.5, total_iters=4)",
              "OneCycleLR(opt, max_lr=0.1, total_steps=12, cycle_momentum={})",
              "CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2)", "PolynomialLR(opt, total_iters=6, power=2.0)",
              "ReduceLROnPlateau(opt, factor=0.5, patience=1)",
              "SequentialLR(opt, [T.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2), "
              "T.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)], milestones=[3])"]


def _wide_scheduler(src, optimizer):
    """Another scheduler kind in place of the one drawn (OneCycleLR cycles momentum or betas where there are)."""
    if optimizer is None or not src.wide_chance(0.4):
        return
    if src.lines[-1].lstrip().startswith("sched = "):
        src.lines.pop()
    kind = src.pick(SCHEDULERS).format(optimizer != "Adagrad")
    src.features.add("scheduler=" + kind.split("(")[0])
    src("sched = T.optim.lr_scheduler." + kind)


PARAM_VIEW_WRITES = ["with T.no_grad(): params[0][1].clamp_(-0.6, 0.6)",
                     "with T.no_grad(): params[0][1].masked_fill_(params[0][1] > 0.5, 0.5)",
                     "with T.no_grad(): params[-1][1].transpose(0, -1)[0] += 0.1",
                     "with T.no_grad(): params[0][1].reshape(-1)[:3] += 0.05",
                     "with T.no_grad(): params[0][1][T.tensor([0])] = 0.2",
                     "with T.no_grad(): params[-1][1].mul_(0.9)",
                     "with T.no_grad(): params[0][1].unsqueeze(0)[0, 0] -= 0.1",
                     "params[0][1].data.clamp_(max=0.4)"]


def _wide_between_steps(src, optimizer):
    """Parameters written through views, layers frozen and unfrozen, state_dict saved and loaded back later."""
    if src.wide_chance(0.4):
        src.features.add("param-view-write")
        src.block(f"if {_when(src.wide)}", [src.pick(PARAM_VIEW_WRITES)])
    if src.wide_chance(0.25):
        src.features.add("freeze")
        k = int(src.wide.integers(2, STEPS - 1))
        src.block(f"if step == {k}", ["for _, p in params[-2:]:", "    p.requires_grad_(False)"])
        src.block(f"if step == {k + int(src.wide.integers(1, 4))}", ["for _, p in params[-2:]:",
                                                                      "    p.requires_grad_(True)"])
    if "model = " in "".join(src.lines) and src.wide_chance(0.3):
        src.features.add("state_dict")
        k = int(src.wide.integers(1, STEPS - 2))
        save = ["saved = {n: v.clone() for n, v in model.state_dict().items()}"]
        load = ["model.load_state_dict(saved)"]
        if optimizer is not None:
            save.append("opt_saved = copy.deepcopy(opt.state_dict())")
            load.append("opt.load_state_dict(opt_saved)")
        src.block(f"if step == {k}", save)
        src.block(f"if step == {k + int(src.wide.integers(1, 3))}", load)


HIDDEN_OPS = [["h = T.where(h > 0, h, 0.1 * h)"], ["h = T.cat([h[:, 1:], h[:, :1] * 2], 1)"],
              ["h = T.stack([h, h * h], 0).mean(0)"], ["h = h.cumsum(1) * 0.5"],
              ["h = T.einsum('bi,bj->bi', h, h.tanh())"],
              ["h = h.gather(1, T.arange(h.shape[1] - 1, -1, -1, dtype=T.long).expand(h.shape[0], -1))"],
              ["h = h.gather(1, (T.arange(h.shape[1], dtype=T.long) // 2).expand(h.shape[0], -1))"],
              ["h = h.index_select(1, T.arange(h.shape[1], dtype=T.long).flip(0))"],
              ["h = T.zeros_like(h).scatter(1, T.arange(h.shape[1], dtype=T.long).roll(1).expand(h.shape[0], -1), h)"],
              ["h = T.zeros_like(h).scatter_add(1, (T.arange(h.shape[1], dtype=T.long) // 2)"
               ".expand(h.shape[0], -1), h) + h"],
              ["h = h * (1 + (h > 0).sum(1, keepdim=True).to(D) / 10)"],
              ["h = h + (h.argmax(1) == 0).to(D).unsqueeze(1) * 0.1"],
              ["rec('count', int((h > 0).sum()))"],
              ["h = h.clone()", "h[:, 0] = h[:, 1] * 2"], ["h = h * 1.0", "h[:, :1] += 0.5"],
              ["h = h + 0.0", "h.t()[0].mul_(2.0)"], ["h = h.clone()", "h.masked_fill_(h > 0.5, 0.5)"],
              ["h = h * 1.0", "h.clamp_(-0.7, 0.7)"], ["h = h.clone()", "h[h < -0.3] = 0.0"],
              ["h = h.clone()", "h.view(-1)[::2] += 1.0"],
              ["h = h.clone()", "h.reshape(h.shape[0], -1)[:, -1:] *= 0.5"],
              ["h = h.clone()", "h += h.mean(1, keepdim=True).expand_as(h)"],
              ["h = h.clone()", "h[:, 1] -= h[:, 0]"]]


def _wide_middle(src):
    """Ops real models use on the hidden value h (batch, width): where, cat, stack, einsum, cumsum, gather,
    index_select, scatter, integer comparisons, and writes through views of it."""
    for p in (0.5, 0.25):
        if src.wide_chance(p):
            lines = src.pick(HIDDEN_OPS)
            src.features.add("op=" + lines[-1].split("(")[0].replace("h = ", "")[:30])
            src.block(f"if {_when(src.wide)}", lines)


WIDE_LOSSES = {"mse": ["F.mse_loss({}, {}, reduction='sum') * 0.1",
                       "(F.mse_loss({}, {}, reduction='none') * T.linspace(0.5, 1.5, steps=N, dtype=D)).mean()",
                       "F.smooth_l1_loss({}, {}, beta=0.5)", "F.huber_loss({}, {}, reduction='sum', delta=0.5) * 0.1"],
               "cross_entropy": ["F.cross_entropy({}, {}, ignore_index=IGNORE, label_smoothing=0.1)",
                                 "F.cross_entropy({}, {}, weight=T.linspace(0.5, 1.5, steps=N, dtype=D), "
                                 "ignore_index=IGNORE)",
                                 "F.cross_entropy({}, {}, ignore_index=IGNORE, reduction='sum') * 0.2",
                                 "F.cross_entropy({}, {}, reduction='none', ignore_index=IGNORE).sum() * 0.3",
                                 "F.cross_entropy({}, {}, weight=T.linspace(0.5, 1.5, steps=N, dtype=D), "
                                 "label_smoothing=0.2)"],
               "nll": ["F.nll_loss(F.log_softmax({}, dim=1), {}, weight=T.linspace(0.5, 1.5, steps=N, dtype=D))",
                       "F.nll_loss(F.log_softmax({}, dim=1), {}, reduction='sum') * 0.2"],
               "bce": ["F.binary_cross_entropy_with_logits({}, {}, pos_weight=T.linspace(0.5, 1.5, steps=N, dtype=D))",
                       "F.binary_cross_entropy_with_logits({}, {}, reduction='sum') * 0.2",
                       "F.binary_cross_entropy(T.sigmoid({}), {}, weight=T.linspace(0.5, 1.5, steps=N, dtype=D))"]}


def _wide_loss(src, kind, n_out):
    """The loss's format: the drawn one, or at times with reduction 'sum'/'none', weights, label smoothing."""
    if not src.wide_chance(0.4):
        return LOSSES[kind]
    src.features.add("loss-options")
    return src.pick(WIDE_LOSSES[kind]).replace("N,", f"{n_out},")


# ---------------------------------------------------------------- running and comparing

def init(i, shape):
    """The NumPy array every library starts parameter or data `i` from."""
    return np.random.default_rng(1000 + i).standard_normal(shape) * 0.5


def run(source, lib, dtype):
    """[(name, value or None)] the program records in lib, or with ('raised', error) last; and the number of steps
    symgrad ran deferred (its loss a DeferredTensor)."""
    from symgrad.eager.tensor import DeferredTensor
    namespace = {"np": np}
    exec(compile(source, "<random eager program>", "exec"), namespace)
    trace, deferred = [], [0]

    def rec(name, value):
        if name == "loss" and isinstance(value, DeferredTensor):
            deferred[0] += 1
        if value is None or isinstance(value, (bool, int, float)):
            trace.append((name, value))
        else:
            trace.append((name, np.array(value.detach().numpy() if hasattr(value, "detach") else value)))
    try:
        namespace["program"](lib, getattr(lib, dtype), init, rec)
    except Exception as e:  # noqa: BLE001 - compared with the other library's outcome
        trace.append(("raised", e))
    return trace, deferred[0]


def compare(ours, theirs, dtype):
    """Raise Mismatch at the first record that differs."""
    rtol, atol = (1e-10, 1e-12) if dtype == "float64" else (2e-3, 2e-4)
    for n, (a, b) in enumerate(zip(ours, theirs)):
        where = f"record {n} ({a[0]}"
        if a[0] != b[0]:
            raise Mismatch(f"{where} vs {b[0]}): symgrad {a[1]!r:.300} vs torch {b[1]!r:.300}")
        if a[0] == "raised" or (a[1] is None) != (b[1] is None):
            raise Mismatch(f"{where}): symgrad {a[1]!r:.300} vs torch {b[1]!r:.300}")
        if isinstance(a[1], np.ndarray):
            got, want = np.asarray(a[1], np.float64), np.asarray(b[1], np.float64)
            if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
                raise Mismatch(f"{where}): symgrad {got.ravel()[:6]} vs torch {want.ravel()[:6]} shapes "
                               f"{got.shape} {want.shape}")
        elif a[1] != b[1] and not (isinstance(a[1], float) and np.isclose(a[1], b[1], rtol=rtol, atol=atol)):
            raise Mismatch(f"{where}): symgrad {a[1]!r} vs torch {b[1]!r}")
    if len(ours) != len(theirs):
        raise Mismatch(f"{len(ours)} records vs torch's {len(theirs)}: the extra one {(ours + theirs)[-1]!r:.300}"
                       if len(ours) > len(theirs) else f"symgrad stopped: {ours[-1]!r:.300}")


def check(seed, dtype="float64", source=None):
    """Run program `seed` (or `source`) in both libraries and compare; (features, deferred steps) or None where
    PyTorch itself raised (a program the generator should not make)."""
    import torch
    from symgrad.eager import tape
    source = source or generate(seed)[0]
    theirs, _ = run(source, torch, dtype)
    if theirs and theirs[-1][0] == "raised":
        return None
    tape.start_over()
    ours, deferred = run(source, sg, dtype)
    try:
        compare(ours, theirs, dtype)
    except Mismatch:
        if dtype != "float32":
            raise
        compare_to_exact(ours, theirs, run(source, torch, "float64")[0])
    return deferred


def compare_to_exact(ours, theirs, exact):
    """float32 loops past compare's bound: symgrad must be as near the float64 run (PyTorch's) as PyTorch's float32
    run is, record by record, within a factor: an Adam or RMSprop step divides by a gradient's root mean square,
    which magnifies float32 rounding alike in both libraries, not a difference of what they compute. Raise
    Mismatch at the first record that is not (or where the float64 run took another branch)."""
    if len(exact) != len(ours) or any(a[0] != c[0] for a, c in zip(ours, exact)):
        raise Mismatch("float32 past the bound, and the float64 run recorded other things (a branch on a value)")
    for n, (a, b, c) in enumerate(zip(ours, theirs, exact)):
        if isinstance(a[1], np.ndarray) and isinstance(c[1], np.ndarray):
            got, want, truth = (np.asarray(v[1], np.float64) for v in (a, b, c))
            ours_off, theirs_off = np.abs(got - truth).max(initial=0), np.abs(want - truth).max(initial=0)
            if ours_off > 4 * theirs_off + 1e-5 * (1 + np.abs(truth).max(initial=0)):
                raise Mismatch(f"record {n} ({a[0]}): symgrad float32 is {ours_off:.3g} from the float64 run, "
                               f"PyTorch's {theirs_off:.3g}")


def minimize(source, dtype):
    """Drop optional lines (and whole blocks) while symgrad still disagrees with PyTorch."""
    def fails(text):
        try:
            check(None, dtype, text)
        except Mismatch:
            return True
        except Exception:  # noqa: BLE001 - a line the kept ones need was dropped
            return False
        return False
    lines = source.splitlines()
    k = len(lines) - 1
    while k > 0:
        if lines[k].endswith("# opt"):
            end = k + 1
            indent = len(lines[k]) - len(lines[k].lstrip())
            while end < len(lines) and lines[end].endswith("# opt") and \
                    len(lines[end]) - len(lines[end].lstrip()) > indent:
                end += 1
            trial = lines[:k] + lines[end:]
            if fails("\n".join(trial) + "\n"):
                lines = trial
        k -= 1
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--float32", action="store_true")
    parser.add_argument("--minimize", action="store_true")
    parser.add_argument("--show", type=int, help="print program SEED and exit")
    options = parser.parse_args(argv)
    if options.show is not None:
        print(generate(options.show)[0])
        return 0
    dtype = "float32" if options.float32 else "float64"
    counts, failures, invalid, deferred_steps = {}, [], [], 0
    for seed in range(options.start, options.start + options.count):
        source, features = generate(seed)
        try:
            deferred = check(seed, dtype)
        except Exception as e:  # noqa: BLE001 - a finding: print and go on
            failures.append(seed)
            shown = minimize(source, dtype) if options.minimize and isinstance(e, Mismatch) else source
            print(f"--- seed {seed}: {type(e).__name__}: {str(e)[:400]}\n{shown}", flush=True)
            if not isinstance(e, Mismatch):
                traceback.print_exc()
            continue
        if deferred is None:
            invalid.append(seed)
            continue
        deferred_steps += deferred
        for feature in features:
            counts[feature] = counts.get(feature, 0) + 1
    print("loops per feature (passing):", dict(sorted(counts.items())))
    print(f"steps: {options.count} loops x {STEPS}; symgrad deferred steps: {deferred_steps}")
    print("torch raised (invalid programs):", invalid)
    print("failures:", failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
