"""Matrix products taken out of a scan's steps: one large product over every step instead of one small
product a step.

A step's product of a row of the scan's xs with a constant matrix (an RNN's input projection `x[t] @ W`,
and in reverse mode each step's input cotangent `dg @ W.T`) is one product of all the rows, before the loop
or after it. A carry that only sums a product a step (reverse mode's weight gradient: `dW += h[t].T @ dg`)
is the one product of the stacked operands after the loop, contracting the steps with the rows
(`(H, T*B) @ (T*B, 4H)`), as JAX and PyTorch effectively compute it; the loop stacks the operand it
computed instead. Each small product was a BLAS call a step, costlier than its data at RNN sizes.
"""
from __future__ import annotations

import collections
from dataclasses import replace

from .. import ir
from ..ops.control import result_p, scan_p, split_scan
from ..ops.ew import ew_p
from ..ops.linalg import matmul_p
from ..ops.shape import reduce_sum_p, reshape_p, transpose_p
from .dce import dce

MIN_LENGTH = 2  # a loop of one step has nothing to gather


def hoist_scan_products(graph: ir.Graph) -> ir.Graph:
    """Each scan of at least MIN_LENGTH steps with its per-step products of rows and constants, and its sums of
    products, computed outside the loop."""
    nodes, changed, renamed = [], False, {}  # renamed: id(old scan out) -> (new out, {old index: new or rule})
    for node in graph.nodes:
        if node.prim is scan_p and node.params["length"] >= MIN_LENGTH:
            rewritten = _Hoisting(node).run()
            if rewritten is not None:
                before, scan, index = rewritten
                nodes.extend(before)
                nodes.append(scan)
                renamed[id(node.out)] = (scan.out, index)
                changed = True
                continue
        if node.prim is result_p and id(node.inputs[0]) in renamed:
            out, index = renamed[id(node.inputs[0])]
            target = index[node.params["index"]]
            if isinstance(target, int):
                nodes.append(ir.Node(result_p, (out,), ir.freeze_attrs({"index": target}), node.out, node.meta))
            else:
                nodes.extend(target(out, node.out))
            continue
        nodes.append(node)
    return ir.Graph(list(graph.inputs), nodes, list(graph.outputs), graph.name) if changed else graph


def typed_node(prim, inputs, attrs, out=None) -> ir.Node:
    """A node of `prim`, its output typed by the primitive's shape rule unless given."""
    if out is None:
        shape, dtype = prim.abstract_eval(tuple(inputs), **attrs)
        out = ir.Value(shape, dtype)
    return ir.Node(prim, tuple(inputs), ir.freeze_attrs(attrs), out, {})


def _transposed(value, nodes) -> ir.Value:
    """value with its last two axes swapped (a matrix transposed, or each step's of a (T, a, b) stack), the node
    appended to `nodes`."""
    perm = tuple(range(value.ndim - 2)) + (value.ndim - 1, value.ndim - 2)
    nodes.append(typed_node(transpose_p, [value], {"perm": perm}))
    return nodes[-1].out


def _steps_down(stack, nodes) -> ir.Value:
    """(T, a, b) -> (T*a, b): each step's rows below the last step's (a reshape, nothing moves)."""
    steps, a, b = stack.shape
    nodes.append(typed_node(reshape_p, [stack], {"shape": (steps * a, b)}))
    return nodes[-1].out


def _steps_across(stack, nodes) -> ir.Value:
    """(T, a, b) -> (a, T*b): each step's columns right of the last step's."""
    steps, a, b = stack.shape
    nodes.append(typed_node(transpose_p, [stack], {"perm": (1, 0, 2)}))
    nodes.append(typed_node(reshape_p, [nodes[-1].out], {"shape": (a, steps * b)}))
    return nodes[-1].out


def _is_add(node) -> bool:
    if node is None or node.prim is not ew_p or len(node.inputs) != 2:
        return False
    params = node.params
    return params["expr"] == params["args"][0] + params["args"][1]


class _Hoisting:
    """The rewrite of one scan node: `run` gives (nodes before it, the new scan, old result index -> new index or
    a function (new scan out, value) -> nodes computing that value), or None when nothing is taken out."""

    def __init__(self, node):
        self.node, params = node, node.params
        self.body, self.length = params["body"], params["length"]
        self.num_consts, self.num_carry = params["num_consts"], params["num_carry"]
        self.producers, self.uses = self.body.producers(), collections.Counter(self.body.consumers())  # 0 if unread
        self.role = {id(v): k for k, v in enumerate(self.body.inputs)}

    def kind(self, value) -> str:
        """'const', 'carry', 'xs' for a body input, else 'node'."""
        k = self.role.get(id(value))
        if k is None:
            return "node"
        return "const" if k < self.num_consts else "carry" if k < self.num_consts + self.num_carry else "xs"

    def peel(self, value):
        """(value, False), or (its source, True) for a transposed matrix."""
        producer = self.producers.get(id(value))
        if producer is not None and producer.prim is transpose_p and producer.params["perm"] == (1, 0):
            return producer.inputs[0], True
        return value, False

    def outer_stack(self, value, nodes):
        """The outer value stacking `value` over the steps when it is a row of the xs or reshapes of one (the
        reshape, of the whole stack, appended to `nodes`), else None."""
        source = value
        while self.kind(source) == "node" and self.producers[id(source)].prim is reshape_p:
            source = self.producers[id(source)].inputs[0]
        if self.kind(source) != "xs":
            return None
        stack = self.node.inputs[self.role[id(source)]]
        if source is value:
            return stack
        nodes.append(typed_node(reshape_p, [stack], {"shape": (self.length,) + value.shape}))
        return nodes[-1].out

    def run(self):
        body, nc, ncarry = self.body, self.num_consts, self.num_carry
        consts, init, xs = split_scan(self.node.inputs, nc, ncarry)
        before = []
        new_xs = []      # (outer stacked value, body input standing for its row)
        replaced = {}    # id(body value) -> the new body input that stands for it
        stored = []      # body values stacked as new ys (their order is their ys position)
        summed = {}      # carry k -> (lhs (value, transposed), rhs (value, transposed), add node)
        product_ys = {}  # ys position m -> (per-step (value, transposed), const (value, transposed), const on left)
        ys = body.outputs[ncarry:]
        rows_ys = {m for m, y in enumerate(ys) if self.outer_stack(y, []) is not None}  # copies of xs rows
        for m, y in enumerate(ys):
            rule = self.const_product(y, outside=True)
            if rule is not None and self.uses[id(y)] == 1 and m not in rows_ys:
                product_ys[m] = rule
        stacked_anyway = {id(y) for m, y in enumerate(ys) if m not in product_ys}
        summed_rows = {}  # carry k -> (a value stacked anyway, the axes the step sums it over, add node)
        for k in range(ncarry):
            rule = self.summed_product(k)
            if rule is not None:
                summed[k] = rule
                stacked_anyway.update(id(v) for v, _ in rule[:2])
        for k in range(ncarry):
            rule = self.summed_value(k) if k not in summed else None
            if rule is None:
                continue
            value, axes = self.unreduced(rule[0])
            if id(value) in stacked_anyway or self.outer_stack(value, []) is not None:
                summed_rows[k] = (value, axes, rule[1])
        for node in body.nodes:
            rule = self.const_product(node.out, outside=False) if node.prim is matmul_p else None
            if rule is not None and id(node.out) not in {id(y) for y in ys}:
                (x, tx), (c, tc), left = rule
                stack = self.outer_stack(x, before)
                outer = consts[self.role[id(c)]]
                products = self.stacked_product(stack, tx, outer, tc, left, before)
                row = ir.Value(node.out.shape, node.out.dtype)
                new_xs.append((products, row))
                replaced[id(node.out)] = row
        if not (summed or summed_rows or product_ys or new_xs or rows_ys):
            return None

        def stack_of(value):
            """The index (into `stored`) of the ys stacking value, or the value itself when the xs stack it."""
            if self.outer_stack(value, []) is not None:
                return value
            for j, s in enumerate(stored):
                if s is value:
                    return j
            stored.append(value)
            return len(stored) - 1

        sums = {k: (stack_of(p), tp, stack_of(q), tq, add) for k, ((p, tp), (q, tq), add) in summed.items()}
        sums_rows = {k: (stack_of(v), axes, add) for k, (v, axes, add) in summed_rows.items()}
        products = {m: (stack_of(x), tx, c, tc, left) for m, ((x, tx), (c, tc), left) in product_ys.items()}
        kept_carries = [k for k in range(ncarry) if k not in summed and k not in summed_rows]
        kept_ys = [m for m in range(len(ys)) if m not in products and m not in rows_ys]
        inputs = (list(body.inputs[:nc]) + [body.inputs[nc + k] for k in kept_carries] +
                  list(body.inputs[nc + ncarry:]) + [row for _, row in new_xs])
        nodes = [replace(n, inputs=tuple(replaced.get(id(v), v) for v in n.inputs)) for n in body.nodes
                 if id(n.out) not in replaced]
        position = {id(ys[m]): len(kept_carries) + new for new, m in enumerate(kept_ys)}
        extra = [v for v in stored if id(v) not in position]  # a value stacked already is read from its ys
        position.update({id(v): len(kept_carries) + len(kept_ys) + j for j, v in enumerate(extra)})
        outputs = [replaced.get(id(v), v) for v in [body.outputs[k] for k in kept_carries] +
                   [ys[m] for m in kept_ys] + extra]
        new_body = dce(ir.Graph(inputs, nodes, outputs, body.name))
        scan_inputs = (consts + [init[k] for k in kept_carries] + xs + [stack for stack, _ in new_xs])
        attrs = {**self.node.params, "body": new_body, "num_carry": len(kept_carries)}
        scan = typed_node(scan_p, scan_inputs, attrs)
        scan = replace(scan, meta=self.node.meta)
        index = {k: new for new, k in enumerate(kept_carries)}
        index.update({ncarry + m: len(kept_carries) + new for new, m in enumerate(kept_ys)})

        def stacked(where, nodes, scan_out):
            if not isinstance(where, int):
                return self.outer_stack(where, nodes)
            value = stored[where]
            out = ir.Value((self.length,) + value.shape, value.dtype)
            nodes.append(typed_node(result_p, [scan_out], {"index": position[id(value)]}, out))
            return out

        def summing(k):
            p, tp, q, tq, add = sums[k]

            def emit(scan_out, out):
                nodes = []
                lhs_stack, rhs_stack = stacked(p, nodes, scan_out), stacked(q, nodes, scan_out)
                lhs = _transposed(_steps_down(lhs_stack, nodes), nodes) if tp else _steps_across(lhs_stack, nodes)
                rhs = _transposed(_steps_across(rhs_stack, nodes), nodes) if tq else _steps_down(rhs_stack, nodes)
                nodes.append(typed_node(matmul_p, [lhs, rhs], {}))
                nodes.append(typed_node(ew_p, [init[k], nodes[-1].out], add.params, out))
                return nodes
            return emit

        def adding(k):
            v, axes, add = sums_rows[k]

            def emit(scan_out, out):
                nodes = []
                steps_and_axes = (0,) + tuple(a + 1 for a in axes)
                nodes.append(typed_node(reduce_sum_p, [stacked(v, nodes, scan_out)], {"axes": steps_and_axes}))
                nodes.append(typed_node(ew_p, [init[k], nodes[-1].out], add.params, out))
                return nodes
            return emit

        def multiplying(m):
            x, tx, c, tc, left = products[m]

            def emit(scan_out, out):
                nodes = []
                stack = stacked(x, nodes, scan_out)
                outer = consts[self.role[id(c)]]
                result = self.stacked_product(stack, tx, outer, tc, left, nodes)
                nodes.append(typed_node(reshape_p, [result], {"shape": out.shape}, out))
                return nodes
            return emit

        def row_stack(m):
            def emit(scan_out, out):
                nodes = []
                nodes.append(typed_node(reshape_p, [self.outer_stack(ys[m], nodes)], {"shape": out.shape}, out))
                return nodes
            return emit

        index.update({ncarry + m: row_stack(m) for m in rows_ys})
        index.update({k: summing(k) for k in sums})
        index.update({k: adding(k) for k in sums_rows})
        index.update({ncarry + m: multiplying(m) for m in products})
        return before, scan, index

    def summed_value(self, k):
        """(the value carry k adds a step, the add) when that is all the carry does, else None."""
        body = self.body
        carry, out = body.inputs[self.num_consts + k], body.outputs[k]
        add = self.producers.get(id(out))
        if not _is_add(add) or self.uses[id(carry)] != 1 or self.uses[id(out)] != 1 or \
                sum(v is carry for v in add.inputs) != 1:
            return None
        value = add.inputs[1] if add.inputs[0] is carry else add.inputs[0]
        return (value, add) if value.shape == carry.shape and value.dtype == carry.dtype else None

    def unreduced(self, value):
        """(x, axes) when value is a sum of x over axes read nowhere else (a broadcast bias's gradient), else
        (value, ())."""
        producer = self.producers.get(id(value))
        if producer is not None and producer.prim is reduce_sum_p and self.uses[id(value)] == 1:
            return producer.inputs[0], tuple(producer.params["axes"])
        return value, ()

    def summed_product(self, k):
        """((lhs, transposed), (rhs, transposed), the add) when carry k only adds a product a step whose operands
        can be stacked (not constants), else None."""
        rule = self.summed_value(k)
        if rule is None:
            return None
        value, add = rule
        out = self.body.outputs[k]
        product = self.producers.get(id(value))
        if product is None or product.prim is not matmul_p or self.uses[id(product.out)] != 1 or \
                product.out.dtype != out.dtype or any(v.ndim != 2 for v in product.inputs):
            return None
        operands = [self.peel(v) for v in product.inputs]
        if any(self.kind(v) == "const" or v.dtype != out.dtype for v, _ in operands):
            return None
        return operands[0], operands[1], add

    def const_product(self, value, outside):
        """((per-step operand, transposed), (const, transposed), const on the left) when value is a product of
        two matrices, one a constant, the other a row of the xs or (`outside`: a ys computed after the loop, which
        may reshape the product) any per-step value; else None."""
        product = self.producers.get(id(value))
        while outside and product is not None and product.prim is reshape_p and self.uses[id(product.inputs[0])] == 1:
            product = self.producers.get(id(product.inputs[0]))
        if product is None or product.prim is not matmul_p or any(v.ndim != 2 for v in product.inputs):
            return None
        (a, ta), (b, tb) = [self.peel(v) for v in product.inputs]
        for step, const, left in (((a, ta), (b, tb), False), ((b, tb), (a, ta), True)):
            kinds = self.kind(step[0]), self.kind(const[0])
            if kinds[1] == "const" and (self.outer_stack(step[0], []) is not None or
                                        outside and kinds[0] != "const"):
                return step, const, left
        return None

    def stacked_product(self, stack, transposed, const, const_transposed, left, nodes) -> ir.Value:
        """Every step's product of a row of `stack` (transposed if so) with `const` (on the left if so), stacked
        (T, m, n): one product, its nodes appended to `nodes`."""
        c = _transposed(const, nodes) if const_transposed else const
        steps = stack.shape[0]
        if not left:  # row @ c: rows of every step below one another
            rows = _steps_down(_transposed(stack, nodes), nodes) if transposed else _steps_down(stack, nodes)
            nodes.append(typed_node(matmul_p, [rows, c], {}))
            m = rows.shape[0] // steps
            nodes.append(typed_node(reshape_p, [nodes[-1].out], {"shape": (steps, m, c.shape[1])}))
            return nodes[-1].out
        cols = _transposed(_steps_down(stack, nodes), nodes) if transposed else _steps_across(stack, nodes)
        nodes.append(typed_node(matmul_p, [c, cols], {}))
        n = cols.shape[1] // steps
        nodes.append(typed_node(reshape_p, [nodes[-1].out], {"shape": (c.shape[0], steps, n)}))
        nodes.append(typed_node(transpose_p, [nodes[-1].out], {"perm": (1, 0, 2)}))
        return nodes[-1].out
