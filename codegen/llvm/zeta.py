"""The Hurwitz zeta function zeta(s, q) = sum_k (q + k)**-s as native code, for polygamma.

polygamma(n, x) = (-1)**(n+1) n! zeta(n + 1, x) for n >= 1 (trigamma is the derivative of
digamma), and scipy.special.cython_special exports no zeta to call, so symgrad emits the
algorithm of Cephes' zeta.c (the one scipy.special.zeta uses): direct terms until q + k >= 9
(at least nine), then the Euler-Maclaurin tail with twelve Bernoulli terms. Only libm's pow
is called. Poles (s == 1, q a non-positive integer) give inf; q = inf gives 0; s < 1, a
non-integer s with q < 0, q = -inf or nan give nan.
"""
from __future__ import annotations

from llvmlite import ir

from . import mathlib
from .types import F64

NAME = "symgrad.hurwitz_zeta"
# (2k)! / B_2k, k = 1..12: the Euler-Maclaurin coefficients of Cephes' zeta.c.
_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
      -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15, 1.8152105401943546773e17,
      -7.1661652561756670113e18)
# Below this, q + k stops changing as k grows: no sum can reach the tail.
_MOST_NEGATIVE_Q = -2.0 ** 52


def call(builder: ir.IRBuilder, module: ir.Module, s, q) -> ir.Value:
    """zeta(s, q) on doubles; a constant whole s (polygamma's case) gets a kernel of its own that
    raises to the power -s by multiplications, not pow: about three times faster."""
    whole = isinstance(s, ir.Constant) and float(s.constant).is_integer() and 2 <= s.constant <= 64
    return builder.call(hurwitz_zeta(module, int(s.constant) if whole else None), [s, q])


def hurwitz_zeta(module: ir.Module, order: int | None = None) -> ir.Function:
    """`double symgrad.hurwitz_zeta[.<order>](double s, double q)`, defined in `module` on first use;
    with `order`, s must equal it."""
    name = NAME if order is None else f"{NAME}.{order}"
    if name in module.globals:
        return module.globals[name]
    fn = ir.Function(module, ir.FunctionType(F64, [F64, F64]), name)
    fn.linkage = "internal"
    s, q = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    c = lambda value: ir.Constant(F64, value)  # noqa: E731
    floor = b.module.declare_intrinsic("llvm.floor", [F64])
    pow_ = b.module.declare_intrinsic("llvm.pow", [F64])

    def power(a):  # a**-s
        if order is None:
            return b.call(pow_, [a, b.fneg(s)])
        return b.fdiv(c(1.0), mathlib.whole_power(a, order, b.fmul))

    q_integer = b.fcmp_ordered("==", q, b.call(floor, [q]))
    s_integer = b.fcmp_ordered("==", s, b.call(floor, [s]))
    pole = b.or_(b.fcmp_ordered("==", s, c(1.0)), b.and_(b.fcmp_ordered("<=", q, c(0.0)), q_integer))
    undefined = b.or_(b.fcmp_unordered("<", s, c(1.0)),  # also nan s
                      b.or_(b.fcmp_unordered("<", q, c(_MOST_NEGATIVE_Q)),  # also nan q and -inf
                            b.and_(b.fcmp_ordered("<", q, c(0.0)), b.not_(s_integer))))
    at_infinity = b.fcmp_ordered("==", q, c(float("inf")))
    special = b.select(pole, c(float("inf")), b.select(at_infinity, c(0.0), c(float("nan"))))
    head, loop, tail, done = (fn.append_basic_block(n) for n in ("head", "loop", "tail", "done"))
    b.cbranch(b.or_(b.or_(pole, undefined), at_infinity), done, head)

    b.position_at_end(head)  # sum = q**-s, then terms for a = q+1, q+2, ... until a >= 9 and nine terms
    first = power(q)
    b.branch(loop)
    b.position_at_end(loop)
    a = b.phi(F64)
    total = b.phi(F64)
    count = b.phi(ir.IntType(32))
    a.add_incoming(q, head)
    total.add_incoming(first, head)
    count.add_incoming(ir.Constant(ir.IntType(32), 0), head)
    next_a = b.fadd(a, c(1.0))
    term = power(next_a)
    next_total = b.fadd(total, term)
    next_count = b.add(count, ir.Constant(ir.IntType(32), 1))
    a.add_incoming(next_a, loop)
    total.add_incoming(next_total, loop)
    count.add_incoming(next_count, loop)
    more = b.or_(b.icmp_signed("<", next_count, ir.Constant(ir.IntType(32), 9)), b.fcmp_ordered("<=", next_a, c(9.0)))
    b.cbranch(more, loop, tail)

    b.position_at_end(tail)  # + a**(1-s)/(s-1) - a**-s/2 + sum_k s(s+1)..(s+2k-2) a**(-s-2k+1) / A_k
    w, last = next_a, term
    result = b.fsub(b.fadd(next_total, b.fdiv(b.fmul(last, w), b.fsub(s, c(1.0)))), b.fmul(last, c(0.5)))
    rising, power, k = c(1.0), last, 0.0
    for coefficient in _A:
        rising = b.fmul(rising, b.fadd(s, c(k)))
        power = b.fdiv(power, w)
        result = b.fadd(result, b.fdiv(b.fmul(rising, power), c(coefficient)))
        rising = b.fmul(rising, b.fadd(s, c(k + 1.0)))
        power = b.fdiv(power, w)
        k += 2.0
    b.branch(done)

    b.position_at_end(done)
    value = b.phi(F64)
    value.add_incoming(special, fn.blocks[0])
    value.add_incoming(result, tail)
    b.ret(value)
    return fn
