"""Branch-free polynomial math kernels emitted as LLVM IR, so loops that call them vectorize.

LLVM lowers `llvm.exp`, `llvm.sin`... to scalar libm calls, which stops the loop
vectorizer. Each kernel here is straight-line code: fma-Horner polynomials, exponent
bit manipulation, the vectorizable intrinsics (fma, fabs, copysign, floor, rint, sqrt,
minnum/maxnum) and `select` for special values (inf, nan, signed zeros follow NumPy).
`math_function(module, name, ty)` defines `symgrad.<name>.f32|f64` once per module as
an internal `alwaysinline` function, so it is inlined into the loop before vectorization; or,
outlined, once with vector variants the vectorizer calls.

Accuracy, measured against NumPy (math.erf for erf) in tests/test_llvm_mathlib.py over
log-uniform points, thresholds and special values: at most 3 ulp in float64 (tan, tanh, asin;
most kernels 1-2) and 2 ulp in float32 (against NumPy's float64 values). float32 kernels
compute in float32 with their own coefficients, except tan, asin, acos and pow, which
evaluate the float64 kernel and round once (in float32 they lose more than 2 ulp to
cancellation, or, for pow, need a double-word log).
sin/cos/tan: x*2/pi in double-word, then an fma Cody-Waite reduction by pi/2 split in three
(float32: four, plus one fix-up step) parts. Accurate to |x| <= 2**46 (float64) and 2**22
(float32 sin/cos; float32 tan runs in float64). Beyond that the quotient loses its last bits, so
there (`_trig_argument`, a branch taken only when a vector holds such an x) x is replaced by the
angle in (-pi, pi] that libm's sin and cos of x give: libm's values to an ulp of pi. inf and nan
give nan.
Polynomial coefficients are Chebyshev fits (mpmath.chebyfit, 100 digits) of the reduced
functions on the ranges stated beside them, rounded to the target format.
"""
import ctypes
import ctypes.util
import functools
import struct
from dataclasses import dataclass

import mpmath
from llvmlite import ir

NAMES = ("exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "sinh", "cosh", "tanh",
         "asin", "acos", "atan", "atan2", "erf", "pow", "asinh", "acosh", "atanh")


def whole_power(x, n: int, multiply):
    """x**n for a whole n >= 1 by repeated squaring, in about log2(n) calls of `multiply(a, b)`."""
    result, square = None, x
    while n:
        if n & 1:
            result = square if result is None else multiply(result, square)
        n >>= 1
        if n:
            square = multiply(square, square)
    return result


@dataclass(frozen=True)
class _Format:
    """Bit layout of one IEEE binary format: what the exponent tricks need."""
    key: str            # "f64" or "f32": selects coefficient tables and names
    bits: int           # total width, also of the integer type used for bit tricks
    mant_bits: int      # explicit mantissa bits
    bias: int
    min_exp: int        # exponent of the smallest normal number
    struct_codes: str   # struct codes of the float and the same-width signed integer

    def float_bits(self, value):
        """The bit pattern of `value` in this format, as a signed integer."""
        float_code, int_code = self.struct_codes
        return struct.unpack("<" + int_code, struct.pack("<" + float_code, value))[0]


F64 = _Format("f64", 64, 52, 1023, -1022, "dq")
F32 = _Format("f32", 32, 23, 127, -126, "fi")


def _split(value, fmt, parts, head_bits=None):
    """`parts` numbers of `fmt` whose sum is `value` (an mpmath number) to ~parts*precision bits.

    head_bits limits the leading part's significant bits so it can be multiplied by a
    small integer exactly (Cody-Waite constants)."""
    precision = fmt.mant_bits + 1
    rest, out = mpmath.mpf(value), []
    for i in range(parts):
        bits = head_bits if (i == 0 and head_bits) else precision
        with mpmath.workprec(bits):
            piece = +rest
        out.append(float(piece))
        rest = rest - piece
    return out


@mpmath.workprec(300)
def _constants(fmt):
    """Range-reduction constants of one format, split into hi/lo parts from 300-bit values."""
    pi, ln2 = +mpmath.pi, mpmath.log(2)
    c = {}
    c["ln2"] = _split(ln2, fmt, 2)                                   # exp: k*hi exact inside fma
    c["ln2_short"] = _split(ln2, fmt, 2, head_bits=fmt.mant_bits - 10)  # log: e*hi exact
    c["pio2"] = _split(pi / 2, fmt, 3 if fmt is F64 else 4)
    for name, value in (("pi", pi), ("pio4", pi / 4), ("3pio4", 3 * pi / 4),
                        ("two_thirds", mpmath.mpf(2) / 3), ("2opi", 2 / pi)):
        c[name] = _split(value, fmt, 2)
    c["log2e"] = float(1 / ln2)
    c["tan_pi8"] = float(mpmath.tan(pi / 8))
    c["tan_3pi8"] = float(mpmath.tan(3 * pi / 8))
    return c


_CONST = {"f64": _constants(F64), "f32": _constants(F32)}

# Coefficients, lowest degree first.
_COEFFS = {
    # exp(r) = 1 + r + r^2 p(r), |r| <= ln2/2
    "exp": {
        "f64": (0.5, 0.16666666666666666, 0.04166666666666668, 0.008333333333333333,
                0.0013888888888878269, 0.00019841269841262761, 2.4801587338565345e-05,
                2.7557319248633827e-06, 2.755726102934377e-07, 2.5052069594795685e-08,
                2.0918961837795778e-09, 1.6087177234380782e-10),
        "f32": (0.5, 0.1666666716337204, 0.04166645556688309, 0.00833331048488617,
                0.0013934541493654251, 0.00019891980628017336),
    },
    # log(1+f) = 2s + s z p(z), s = f/(2+f), z = s^2 <= ((sqrt2-1)/(sqrt2+1))^2
    "log": {
        "f64": (0.666666666666667, 0.3999999999989322, 0.28571428628810996,
                0.22222210674238516, 0.18182922513515942, 0.15330617306743305,
                0.1463003136412286),
        "f32": (0.6666666865348816, 0.40000125765800476, 0.28550398349761963,
                0.23341943323612213),
    },
    # the same with the 2/3 term taken out exactly (pow's double-word log): z^2 p(z)
    "log_tail": {
        "f64": (0.4000000000000003, 0.28571428571332935, 0.22222222273617623,
                0.18181807839015793, 0.15385604411768514, 0.13284977969619904,
                0.12925663575110274),
    },
    # sin(r) = r + r z p(z), cos(r) = 1 - z/2 + z^2 q(z), z = r^2 <= (pi/4)^2
    "sin": {
        "f64": (-0.16666666666666666, 0.008333333333333331, -0.0001984126984126457,
                2.755731921895673e-06, -2.5052106100926675e-08, 1.605851097953535e-10,
                -7.58549250782124e-13),
        "f32": (-0.1666666716337204, 0.008333331905305386, -0.00019840039021801203,
                2.7243811473454116e-06),
    },
    "cos": {
        "f64": (0.041666666666666664, -0.0013888888888888887, 2.480158730158437e-05,
                -2.75573192211902e-07, 2.0876755717957296e-09, -1.147044941240971e-11,
                4.745202155702359e-14),
        "f32": (0.0416666679084301, -0.00138888880610466, 2.48005599132739e-05,
                -2.729585730776307e-07),
    },
    # atan(t) = t + t z p(z), z = t^2 <= tan(pi/8)^2
    "atan": {
        "f64": (-0.3333333333333333, 0.19999999999999785, -0.14285714285654638,
                0.11111111104652255, -0.09090908728587459, 0.07692295658327873,
                -0.06666412077725274, 0.058787824694439814, -0.0522938047378184,
                0.045467195095551666, -0.034445844423577385, 0.016148228546771868),
        "f32": (-0.3333333432674408, 0.19999976456165314, -0.1428409367799759,
                0.11070311814546585, -0.08616863936185837, 0.05028080567717552),
    },
    # asin(t) = t + t z p(z), z = t^2 <= 1/4
    "asin": {
        "f64": (0.16666666666666646, 0.07500000000023552, 0.04464285709857459,
                0.03038194769375197, 0.022372036415340368, 0.017355483450525767,
                0.013926889441300572, 0.011897349374456148, 0.0076923173291771904,
                0.01638214792866796, -0.011361049152553294, 0.028634611090258177),
    },
    # erf(x) = x + x p(x^2), |x| <= 1
    "erf_small": {
        "f64": (0.12837916709551256, -0.37612638903183543, 0.11283791670945006,
                -0.02686617064323777, 0.0052239776071164225, -0.0008548325975389692,
                0.00012055294904839707, -1.492473690741966e-05, 1.6447424703317362e-06,
                -1.6208483801871705e-07, 1.3720064546777686e-08, -7.795898827002142e-10),
        "f32": (0.12837916612625122, -0.3761262595653534, 0.11283594369888306,
                -0.02685421146452427, 0.005189087241888046, -0.000801686430349946,
                7.875874871388078e-05),
    },
    # sinh(x) = x + x z p(z), z = x^2 <= 1 (float32 only: float64 needs no split)
    "sinh_small": {
        "f32": (0.1666666716337204, 0.008333340287208557, 0.00019838038133457303,
                2.806790234899381e-06),
    },
    # tanh(x) = x + x z p(z), z = x^2 <= 1 (float32 only)
    "tanh_small": {
        "f32": (-0.3333333432674408, 0.13333331048488617, -0.05396755784749985,
                0.021862249821424484, -0.008824876509606838, 0.003475255100056529,
                -0.0012382217682898045, 0.0003351244668010622, -4.779025766765699e-05),
    },
    # erfc(x) = t exp(-x^2 + h(u)), t = 2/(2+x), u = scale*t + shift in [-1, 1],
    # 1 <= x <= 6 (float32: 4), where erf rounds to 1
    "erfc_h": {
        "f64": (-0.7274922853522042, 0.2765835893613121, 0.010174695380256196,
                -0.0031116996674214266, -0.0004014712041645086, 9.56000637579709e-05,
                1.6041266348882173e-05, -4.527152133600417e-06, -6.019924001109505e-07,
                2.564373734449632e-07, 1.4524347300627904e-08, -1.460651853459555e-08,
                5.094778498180579e-10, 7.27781750751347e-10, -1.0292374797044583e-10,
                -2.4944763820833785e-11, 6.971521082137717e-12),
        "f32": (-0.671794056892395, 0.22421430051326752, 0.00526036461815238,
                -0.0017359829507768154, -0.00012186351523268968, 3.451209340710193e-05,
                2.3706306819804013e-06),
    },
}
# erf's large-argument range and the affine map of t = 2/(2+x) onto [-1, 1]
_ERF_RANGE = {"f64": (6.0, 4.8, -2.2), "f32": (4.0, 6.0, -3.0)}
# beyond these |x|, e^(-2|x|) is below half an ulp: tanh rounds to +-1, sinh and cosh
# to exp(|x|)/2
_SATURATION = {"f64": 22.0, "f32": 9.5}
# below this, expm1 rounds to -1
_EXPM1_FLOOR = {"f64": -50.0, "f32": -30.0}
# exp clamps its argument to [lo, hi]: beyond them the result is 0 or inf anyway
_EXP_CLAMP = {"f64": (-746.0, 711.0), "f32": (-104.0, 90.0)}
# above this, asinh(x) = log(2x) and acosh(x) = log(2x) to within rounding
_LOG2X_THRESHOLD = {"f64": 2.0 ** 54, "f32": 2.0 ** 25}


class _Emitter:
    """An IRBuilder for one float type, or vectors of `lanes` of it: arithmetic, intrinsics and bit
    tricks kernels share."""

    def __init__(self, builder, ty, lanes=None):
        self.b = builder
        self.fmt = F64 if isinstance(ty, ir.DoubleType) else F32
        self.lanes = lanes
        self.ty = ty if lanes is None else ir.VectorType(ty, lanes)
        ity = ir.IntType(self.fmt.bits)
        self.ity = ity if lanes is None else ir.VectorType(ity, lanes)
        self.const = _CONST[self.fmt.key]

    # constants and arithmetic
    def _splat(self, ty, value):
        return ir.Constant(ty, value if self.lanes is None else [value] * self.lanes)

    def c(self, value):
        return self._splat(self.ty, float(value))

    def i(self, value):
        """An integer constant of the float type's width (bit tricks)."""
        return self._splat(self.ity, int(value))

    def coeffs(self, name):
        return _COEFFS[name][self.fmt.key]

    def add(self, a, b):
        return self.b.fadd(a, b)

    def sub(self, a, b):
        return self.b.fsub(a, b)

    def mul(self, a, b):
        return self.b.fmul(a, b)

    def div(self, a, b):
        return self.b.fdiv(a, b)

    def neg(self, a):
        return self.b.fneg(a)

    def _intrinsic(self, name, *args):
        scalar = self.fmt.key
        name = f"llvm.{name}.{scalar if self.lanes is None else f'v{self.lanes}{scalar}'}"
        module = self.b.module
        fn = module.globals.get(name) or ir.Function(module, ir.FunctionType(self.ty, [self.ty] * len(args)), name)
        return self.b.call(fn, args)

    def fma(self, a, b, c):
        return self._intrinsic("fma", a, b, c)

    def abs(self, a):
        return self._intrinsic("fabs", a)

    def copysign(self, magnitude, sign):
        return self._intrinsic("copysign", magnitude, sign)

    def floor(self, a):
        return self._intrinsic("floor", a)

    def rint(self, a):
        return self._intrinsic("rint", a)

    def sqrt(self, a):
        return self._intrinsic("sqrt", a)

    def minnum(self, a, b):
        """min that returns the number if the other operand is nan (use before fptosi)."""
        return self._intrinsic("minnum", a, b)

    def maxnum(self, a, b):
        return self._intrinsic("maxnum", a, b)

    def horner(self, x, coeffs):
        """sum(coeffs[i] * x**i) by fma Horner."""
        acc = self.c(coeffs[-1])
        for coeff in reversed(coeffs[:-1]):
            acc = self.fma(acc, x, self.c(coeff))
        return acc

    def odd_series(self, x, name):
        """x + x z p(z), z = x^2: the odd polynomials (sin, atan, asin...) with coeffs `name`."""
        z = self.mul(x, x)
        return self.fma(self.mul(x, z), self.horner(z, self.coeffs(name)), x)

    # comparisons (ordered: false when an operand is nan) and selection
    def cmp(self, op, a, b):
        return self.b.fcmp_ordered(op, a, b)

    def isnan(self, a):
        return self.b.fcmp_unordered("uno", a, a)

    def select(self, cond, a, b):
        return self.b.select(cond, a, b)

    def or_(self, a, b):
        return self.b.or_(a, b)

    def and_(self, a, b):
        return self.b.and_(a, b)

    def not_(self, a):
        return self.b.not_(a)

    def clamp_above(self, x, limit):
        """min(x, limit) keeping nan."""
        return self.select(self.cmp(">", x, self.c(limit)), self.c(limit), x)

    # bit-level helpers
    def signbit(self, x):
        return self.b.icmp_signed("<", self.b.bitcast(x, self.ity), self.i(0))

    def pow2(self, k):
        """2**k for an integral float k inside the normal exponent range, by building the bits."""
        ik = self.b.fptosi(k, self.ity)
        biased = self.b.add(ik, self.i(self.fmt.bias))
        return self.b.bitcast(self.b.shl(biased, self.i(self.fmt.mant_bits)),
                              self.ty)

    def split_pow2(self, k):
        """(2**k1, 2**k2) with k1 + k2 = k, each factor normal while |k| <= 2*(bias+1)."""
        k1 = self.floor(self.mul(k, self.c(0.5)))
        return self.pow2(k1), self.pow2(self.sub(k, k1))

    def two_sum(self, a, b):
        """s + err == a + b exactly (Knuth)."""
        s = self.add(a, b)
        bb = self.sub(s, a)
        err = self.add(self.sub(a, self.sub(s, bb)), self.sub(b, bb))
        return s, err


def _via_float64(kernel):
    """A float32 kernel that evaluates the float64 one: one final rounding, for functions whose
    float32 evaluation would lose more than 2 ulp to cancellation."""
    def widened(m, *args):
        if m.fmt is F64:
            return kernel(m, *args)
        wide = _Emitter(m.b, ir.DoubleType(), m.lanes)
        return m.b.fptrunc(kernel(wide, *(m.b.fpext(a, wide.ty) for a in args)), m.ty)
    widened.__doc__ = kernel.__doc__
    return widened


# ---------------------------------------------------------------- exponentials

def _exp_reduce(m, x, lo=None):
    """k, r with x (+ lo) = k*ln2 + r, |r| <= ln2/2; x is clamped so k stays in range."""
    lo_clamp, hi_clamp = _EXP_CLAMP[m.fmt.key]
    xc = m.maxnum(m.minnum(x, m.c(hi_clamp)), m.c(lo_clamp))
    k = m.rint(m.mul(xc, m.c(m.const["log2e"])))
    ln2_hi, ln2_lo = m.const["ln2"]
    r = m.fma(k, m.c(-ln2_hi), xc)
    r = m.fma(k, m.c(-ln2_lo), r)
    if lo is not None:
        r = m.add(r, lo)
    return k, r


def _expm1_reduced(m, r):
    """expm1(r) for |r| <= ln2/2."""
    return m.fma(m.mul(r, r), m.horner(r, m.coeffs("exp")), r)


def _exp_core(m, x, lo=None, halve=False, normal_result=False):
    """exp(x + lo) (halved if asked) for non-nan x; 0 or inf beyond the thresholds.

    normal_result: the caller knows exp(x) is a normal number, so one scaling is enough."""
    k, r = _exp_reduce(m, x, lo)
    er = m.add(_expm1_reduced(m, r), m.c(1.0))
    if normal_result:
        return m.mul(er, m.pow2(k))
    s1, s2 = m.split_pow2(m.sub(k, m.c(1.0)) if halve else k)
    return m.mul(m.mul(er, s1), s2)


def _exp(m, x):
    """exp with nan passed through (the core already gives 0 and inf)."""
    return m.select(m.isnan(x), x, _exp_core(m, x))


def _expm1_core(m, x):
    """expm1(x) = 2^k (expm1(r) + 1) - 1 evaluated as (2^k1 e + 2^k1 - 2^-k2) 2^k2: one rounding."""
    xc = m.maxnum(x, m.c(_EXPM1_FLOOR[m.fmt.key]))
    k, r = _exp_reduce(m, xc)
    e = _expm1_reduced(m, r)
    k1 = m.floor(m.mul(k, m.c(0.5)))
    s1, s2, inv_s2 = m.pow2(k1), m.pow2(m.sub(k, k1)), m.pow2(m.sub(k1, k))
    res = m.mul(m.fma(s1, e, m.sub(s1, inv_s2)), s2)
    return m.select(m.or_(m.isnan(x), m.cmp("==", x, m.c(0.0))), x, res)


def _tanh(m, x):
    """float64: tanh|x| = t/(t+2), t = expm1(2|x|), with no cancellation for small |x|.

    float32: an odd polynomial up to 1, then 1 - 2/(exp(2|x|) + 1), cheaper and as accurate."""
    a = m.clamp_above(m.abs(x), _SATURATION[m.fmt.key])
    if m.fmt is F64:
        t = _expm1_core(m, m.add(a, a))
        return m.copysign(m.div(t, m.add(t, m.c(2.0))), x)
    e = _exp_core(m, m.add(a, a), normal_result=True)
    large = m.sub(m.c(1.0), m.div(m.c(2.0), m.add(e, m.c(1.0))))
    res = m.select(m.cmp(">", a, m.c(1.0)), large, m.odd_series(a, "tanh_small"))
    return m.copysign(res, x)


def _sinh(m, x):
    """0.5(t + t/(t+1)), t = expm1|x|, below the saturation point; exp(|x|)/2 above.

    float32 uses an odd polynomial below 1, where the quotient's roundings exceed 2 ulp."""
    a = m.abs(x)
    limit = _SATURATION[m.fmt.key]
    t = _expm1_core(m, m.clamp_above(a, limit))
    moderate = m.mul(m.c(0.5), m.add(t, m.div(t, m.add(t, m.c(1.0)))))
    if m.fmt is F32:
        moderate = m.select(m.cmp(">", a, m.c(1.0)), moderate, m.odd_series(a, "sinh_small"))
    large = _exp_core(m, a, halve=True)
    return m.copysign(m.select(m.cmp(">", a, m.c(limit)), large, moderate), x)


def _cosh(m, x):
    """0.5 e + 0.5/e, e = exp|x|, below the saturation point; exp(|x|)/2 above."""
    a = m.abs(x)
    limit = _SATURATION[m.fmt.key]
    e = _exp_core(m, m.clamp_above(a, limit), normal_result=True)
    small = m.fma(m.c(0.5), e, m.div(m.c(0.5), e))
    large = _exp_core(m, a, halve=True)
    res = m.select(m.cmp(">", a, m.c(limit)), large, small)
    return m.select(m.isnan(x), x, res)


# ---------------------------------------------------------------- logarithms

def _log_decompose(m, x):
    """(e, f) with x = 2^e (1 + f), 1 + f in [sqrt(1/2), sqrt(2)), for positive finite x."""
    fmt, b = m.fmt, m.b
    tiny = m.cmp("<", x, m.c(2.0 ** fmt.min_exp))
    boost = fmt.mant_bits + 2
    xs = m.select(tiny, m.mul(x, m.c(2.0 ** boost)), x)
    one_bits = fmt.bias << fmt.mant_bits
    sqrt_half_bits = fmt.float_bits(2.0 ** -0.5)
    bits = b.add(b.bitcast(xs, m.ity), m.i(one_bits - sqrt_half_bits))
    e_int = b.sub(b.ashr(bits, m.i(fmt.mant_bits)), m.i(fmt.bias))
    mant = b.add(b.and_(bits, m.i((1 << fmt.mant_bits) - 1)),
                 m.i(sqrt_half_bits))
    e = m.sub(b.sitofp(e_int, m.ty), m.select(tiny, m.c(boost), m.c(0.0)))
    f = m.sub(b.bitcast(mant, m.ty), m.c(1.0))
    return e, f


def _log_core(m, x, x_err=None):
    """log(x + x_err) for positive finite x and |x_err| <= ulp(x), fdlibm's evaluation order."""
    e, f = _log_decompose(m, x)
    ln2_hi, ln2_lo = m.const["ln2_short"]
    s = m.div(f, m.add(f, m.c(2.0)))
    z = m.mul(s, s)
    r = m.mul(z, m.horner(z, m.coeffs("log")))
    hfsq = m.mul(m.mul(m.c(0.5), f), f)
    low = m.mul(e, m.c(ln2_lo)) if x_err is None else m.fma(e, m.c(ln2_lo), m.div(x_err, x))
    tail = m.fma(s, m.add(hfsq, r), low)
    return m.fma(e, m.c(ln2_hi), m.neg(m.sub(m.sub(hfsq, tail), f)))


def _log(m, x):
    """log with NumPy's specials."""
    return _with_log_specials(m, x, _log_core(m, x))


def _with_log_specials(m, x, res):
    """`res`, a logarithm of x computed as if x were positive and finite, with NumPy's specials: -inf at +-0,
    nan below 0, inf at inf."""
    res = m.select(m.cmp("==", x, m.c(float("inf"))), x, res)
    res = m.select(m.cmp("==", x, m.c(0.0)), m.c(float("-inf")), res)
    return m.select(m.cmp("<", x, m.c(0.0)), m.c(float("nan")), m.select(m.isnan(x), x, res))


# log2 and log10 in float64 (FreeBSD's e_log2.c and e_log10.c): 1/ln(b) and log_b(2) as a high part with its low
# 32 bits zero and the rest, so e log_b(2) and the high part of log(1 + f) scale exactly.
_LOG_BASES = {"log2": (1.44269504072144627571e+00, 1.67517131648865118353e-10, 1.0, 0.0),
              "log10": (4.34294481878168880939e-01, 2.50829467116452752298e-11, 3.01029995663611771306e-01,
                        3.69423907715893078616e-13)}


def _log_base(m, x, base):
    """log2 or log10 (`base`) of positive finite float64 x: e log_b(2) + log(1 + f) / ln(b), summed so that a power
    of the base gives its exponent exactly (log(x) / ln(10) is 2.9999999999999996 at 1000)."""
    scale_hi, scale_lo, two_hi, two_lo = _LOG_BASES[base]
    e, f = _log_decompose(m, x)
    s = m.div(f, m.add(f, m.c(2.0)))
    z = m.mul(s, s)
    hfsq = m.mul(m.mul(m.c(0.5), f), f)
    r = m.mul(s, m.add(hfsq, m.mul(z, m.horner(z, m.coeffs("log")))))
    hi = m.sub(f, hfsq)
    hi = m.b.bitcast(m.b.and_(m.b.bitcast(hi, m.ity), m.i(-(1 << 32))), m.ty)  # its low 32 bits cleared
    lo = m.add(m.sub(m.sub(f, hi), hfsq), r)
    scaled_hi, exponent = m.mul(hi, m.c(scale_hi)), m.mul(e, m.c(two_hi))
    low = m.add(m.add(m.mul(e, m.c(two_lo)), m.mul(m.add(lo, hi), m.c(scale_lo))), m.mul(lo, m.c(scale_hi)))
    total = m.add(exponent, scaled_hi)
    return m.add(m.add(low, m.add(m.sub(exponent, total), scaled_hi)), total)


def _log_of_base(base):
    def kernel(m, x):
        """log2 or log10 with log's specials."""
        return _with_log_specials(m, x, _log_base(m, x, base))
    return kernel


def _log1p_core(m, x):
    """log1p(x) for x > -1 finite: log(u + err), u + err = 1 + x exactly."""
    u = m.add(m.c(1.0), x)
    small = m.cmp("<", m.abs(x), m.c(1.0))
    err = m.select(small, m.sub(x, m.sub(u, m.c(1.0))), m.sub(m.c(1.0), m.sub(u, x)))
    res = _log_core(m, u, err)
    tiny = m.cmp("<", m.abs(x), m.c(2.0 ** -(m.fmt.mant_bits + 2)))
    return m.select(tiny, x, res)


def _log1p(m, x):
    """log1p with NumPy's specials: -inf at -1, nan below, inf at inf."""
    res = _log1p_core(m, x)
    res = m.select(m.cmp("==", x, m.c(float("inf"))), x, res)
    res = m.select(m.cmp("==", x, m.c(-1.0)), m.c(float("-inf")), res)
    return m.select(m.cmp("<", x, m.c(-1.0)), m.c(float("nan")), m.select(m.isnan(x), x, res))


def _log_dd(m, x):
    """log(x) as hi + lo to ~2^-65 relative, for pow (float64 only)."""
    e, f = _log_decompose(m, x)
    d = m.add(m.c(2.0), f)
    d_err = m.sub(f, m.sub(d, m.c(2.0)))
    inv_d = m.div(m.c(1.0), d)
    s_hi = m.mul(f, inv_d)
    s_lo = m.mul(m.sub(m.fma(m.neg(s_hi), d, f), m.mul(s_hi, d_err)), inv_d)
    s2_hi = m.mul(s_hi, s_hi)
    s2_lo = m.fma(m.add(s_hi, s_hi), s_lo, m.fma(s_hi, s_hi, m.neg(s2_hi)))
    s3_hi = m.mul(s2_hi, s_hi)
    s3_lo = m.fma(s2_lo, s_hi, m.fma(s2_hi, s_lo, m.fma(s2_hi, s_hi, m.neg(s3_hi))))
    c_hi, c_lo = m.const["two_thirds"]
    b_hi = m.mul(s3_hi, m.c(c_hi))
    b_lo = m.fma(s3_lo, m.c(c_hi), m.fma(s3_hi, m.c(c_lo), m.fma(s3_hi, m.c(c_hi), m.neg(b_hi))))
    tail = m.mul(m.mul(s3_hi, s2_hi), m.horner(s2_hi, m.coeffs("log_tail")))
    ln2_hi, ln2_lo = m.const["ln2_short"]
    hi1, err1 = m.two_sum(m.mul(e, m.c(ln2_hi)), m.add(s_hi, s_hi))
    hi2, err2 = m.two_sum(hi1, b_hi)
    lo = m.add(m.add(err1, err2), m.add(m.add(s_lo, s_lo), b_lo))
    lo = m.add(lo, m.fma(e, m.c(ln2_lo), tail))
    hi = m.add(hi2, lo)
    return hi, m.sub(lo, m.sub(hi, hi2))


def _pow(m, x, y):
    """C99 pow: exp(y log|x|), sign for odd integer y, Annex F specials.

    float64 needs a double-word log (|y log x| up to 745 magnifies its error); float32 runs
    in float64 with the plain log, which is then far more accurate than float32 needs."""
    if m.fmt is F64:
        return _pow_from_log(m, x, y, double_word=True)
    wide = _Emitter(m.b, ir.DoubleType(), m.lanes)
    return m.b.fptrunc(_pow_from_log(wide, m.b.fpext(x, wide.ty), m.b.fpext(y, wide.ty),
                                     double_word=False), m.ty)


def _pow_from_log(m, x, y, double_word):
    """pow in m's format from a double-word (float64) or plain log; see _pow."""
    inf, nan = m.c(float("inf")), m.c(float("nan"))
    ax = m.abs(x)
    if double_word:
        hi, lo = _log_dd(m, ax)
        p_hi = m.mul(y, hi)
        p_lo = m.fma(y, lo, m.fma(y, hi, m.neg(p_hi)))
    else:
        p_hi, p_lo = m.mul(y, _log_core(m, ax)), None
    mag = _exp_core(m, p_hi, p_lo)
    y_int = m.cmp("==", m.floor(y), y)
    half = m.mul(y, m.c(0.5))
    y_odd = m.and_(y_int, m.cmp("!=", m.floor(half), half))
    negate = m.and_(m.signbit(x), y_odd)
    # x = 0 or inf, y = +-inf, or |y log x| far beyond the range: the magnitude is 0, 1 or inf
    special = m.or_(m.or_(m.cmp("==", ax, m.c(0.0)), m.cmp("==", ax, inf)),
                    m.or_(m.cmp("==", m.abs(y), inf), m.cmp(">", m.abs(p_hi), m.c(2048.0))))
    grows = m.b.icmp_unsigned("==", m.cmp(">", ax, m.c(1.0)), m.cmp(">", y, m.c(0.0)))
    special_mag = m.select(m.cmp("==", ax, m.c(1.0)), m.c(1.0), m.select(grows, inf, m.c(0.0)))
    mag = m.select(special, special_mag, mag)
    res = m.select(negate, m.neg(mag), mag)
    negative_base = m.and_(m.cmp("<", x, m.c(0.0)), m.cmp(">", x, m.neg(inf)))
    res = m.select(m.and_(negative_base, m.not_(y_int)), nan, res)
    res = m.select(m.or_(m.isnan(x), m.isnan(y)), nan, res)
    return m.select(m.or_(m.cmp("==", x, m.c(1.0)), m.cmp("==", y, m.c(0.0))), m.c(1.0), res)


def _asinh(m, x):
    """log1p(a + a^2/(1 + sqrt(1 + a^2))), a = |x|; log1p(a) + ln2 once a^2 swamps 1."""
    a = m.abs(x)
    big = m.cmp(">", a, m.c(_LOG2X_THRESHOLD[m.fmt.key]))
    a_s = m.select(big, m.c(1.0), a)
    v = m.mul(a_s, a_s)
    arg = m.add(a_s, m.div(v, m.add(m.c(1.0), m.sqrt(m.add(m.c(1.0), v)))))
    res = _log1p_core(m, m.select(big, a, arg))
    res = m.select(big, m.add(res, m.c(m.const["ln2"][0])), res)
    res = m.select(m.cmp("==", a, m.c(float("inf"))), a, res)
    return m.copysign(res, x)


def _acosh(m, x):
    """log1p(t + sqrt(2t + t^2)), t = x - 1; log1p(x) + ln2 for large x; nan below 1."""
    big = m.cmp(">", x, m.c(_LOG2X_THRESHOLD[m.fmt.key]))
    t = m.sub(m.select(big, m.c(1.0), x), m.c(1.0))
    arg = m.add(t, m.sqrt(m.fma(t, t, m.add(t, t))))
    res = _log1p_core(m, m.select(big, x, arg))
    res = m.select(big, m.add(res, m.c(m.const["ln2"][0])), res)
    res = m.select(m.cmp("==", x, m.c(float("inf"))), x, res)
    return m.select(m.cmp("<", x, m.c(1.0)), m.c(float("nan")), res)


def _atanh(m, x):
    """0.5 log1p(2a/(1-a)), a = |x|, sign of x; inf at 1, nan beyond."""
    a = m.abs(x)
    res = m.mul(m.c(0.5), _log1p(m, m.div(m.add(a, a), m.sub(m.c(1.0), a))))
    return m.copysign(res, x)


# ---------------------------------------------------------------- trigonometric

def _reduce_half_pi(m, x):
    """(q, r): x = q pi/2 + r, |r| <= pi/4, by fma Cody-Waite with pi/2 split in parts.

    q rounds x*2/pi taken in double-word; in float32 it can still be one off once x*2/pi
    has few fraction bits, so float32 reduces once more."""
    two_over_pi_hi, two_over_pi_lo = m.const["2opi"]
    t_hi = m.mul(x, m.c(two_over_pi_hi))
    t_lo = m.fma(x, m.c(two_over_pi_lo), m.fma(x, m.c(two_over_pi_hi), m.neg(t_hi)))
    q = m.rint(m.add(t_hi, t_lo))
    r = x
    for part in m.const["pio2"]:
        r = m.fma(q, m.c(-part), r)
    if m.fmt is F32:
        q_fix = m.rint(m.mul(r, m.c(two_over_pi_hi)))
        for part in m.const["pio2"]:
            r = m.fma(q_fix, m.c(-part), r)
        q = m.add(q, q_fix)
    # past the accurate range r can leave [-pi/4, pi/4]: keep the polynomials bounded (and nan)
    edge = 0.8
    return q, m.select(m.cmp(">", r, m.c(edge)), m.c(edge),
                       m.select(m.cmp("<", r, m.c(-edge)), m.c(-edge), r))


def _quadrant_flags(m, q):
    """(odd, upper): q is odd; q mod 4 is 2 or 3. Computed in floats (false for inf/nan q)."""
    half = m.mul(q, m.c(0.5))
    odd = m.cmp("!=", m.floor(half), half)
    quarter = m.mul(q, m.c(0.25))
    upper = m.cmp(">=", m.sub(quarter, m.floor(quarter)), m.c(0.5))
    return odd, upper


def _sin_cos_reduced(m, r):
    """(sin r, cos r) for |r| <= pi/4."""
    z = m.mul(r, r)
    s = m.odd_series(r, "sin")
    tail = m.fma(m.mul(z, z), m.horner(z, m.coeffs("cos")), m.mul(m.c(-0.5), z))
    return s, m.add(m.c(1.0), tail)


def _sin(m, x):
    """sin r or cos r by quadrant, negated in quadrants 2 and 3; sin(-0) = -0."""
    q, r = _reduce_half_pi(m, x)
    odd, upper = _quadrant_flags(m, q)
    s, c = _sin_cos_reduced(m, r)
    v = m.select(odd, c, s)
    res = m.select(upper, m.neg(v), v)
    return m.select(m.cmp("==", x, m.c(0.0)), x, res)


def _cos(m, x):
    """cos r or sin r by quadrant with the sign of cos(q pi/2 + r)."""
    q, r = _reduce_half_pi(m, x)
    odd, upper = _quadrant_flags(m, q)
    s, c = _sin_cos_reduced(m, r)
    v = m.select(odd, s, c)
    # cos(x) = sin(x + pi/2): negative in quadrants 1 and 2
    negative = m.b.xor(odd, upper)
    return m.select(negative, m.neg(v), v)


@_via_float64
def _tan(m, x):
    """sin/cos of the reduced argument, or -cos/sin in odd quadrants."""
    q, r = _reduce_half_pi(m, x)
    odd, _ = _quadrant_flags(m, q)
    s, c = _sin_cos_reduced(m, r)
    res = m.div(m.select(odd, m.neg(c), s), m.select(odd, s, c))
    return m.select(m.cmp("==", x, m.c(0.0)), x, res)


def _atan_ratio(m, a, b):
    """(t, t_lo, big, mid) for a/b >= 0: atan(a/b) = base + atan(t + t_lo), |t| <= tan(pi/8).

    The region (big, mid) picks the base: a/b > tan(3pi/8) -> pi/2 + atan(-b/a);
    a/b > tan(pi/8) -> pi/4 + atan((a-b)/(a+b)); else atan(a/b). In float32 t_lo carries the
    rounding of a-b, a+b and the quotient, which would otherwise cost 2 ulp; float64 stays
    within 2 ulp without it (t_lo = -0, which LLVM folds away)."""
    big = m.cmp(">", a, m.mul(b, m.c(m.const["tan_3pi8"])))
    mid = m.cmp(">", a, m.mul(b, m.c(m.const["tan_pi8"])))
    if m.fmt is F64:
        num = m.select(big, m.neg(b), m.select(mid, m.sub(a, b), a))
        den = m.select(big, a, m.select(mid, m.add(a, b), b))
        return m.div(num, den), m.c(-0.0), big, mid
    diff, diff_err = m.two_sum(a, m.neg(b))
    total, total_err = m.two_sum(a, b)
    zero = m.c(0.0)
    num = m.select(big, m.neg(b), m.select(mid, diff, a))
    den = m.select(big, a, m.select(mid, total, b))
    num_err = m.select(big, zero, m.select(mid, diff_err, zero))
    den_err = m.select(big, zero, m.select(mid, total_err, zero))
    t = m.div(num, den)
    residual = m.fma(m.neg(t), den_err, m.add(m.fma(m.neg(t), den, num), num_err))
    t_lo = m.div(residual, den)
    # an infinite den (t = +-0) or nan input makes the residual nan: t alone is right then
    return t, m.select(m.isnan(t_lo), zero, t_lo), big, mid


def _pick(m, big, mid, on_big, on_mid, otherwise):
    """One of three constants by atan region."""
    return m.select(big, m.c(on_big), m.select(mid, m.c(on_mid), m.c(otherwise)))


def _atan(m, x):
    """base + atan(t + t_lo) with base 0, pi/4 or pi/2 (as hi + lo) by region, sign of x."""
    a = m.abs(x)
    t, t_lo, big, mid = _atan_ratio(m, a, m.c(1.0))
    (pio2_hi, pio2_lo), (pio4_hi, pio4_lo) = m.const["pio2"][:2], m.const["pio4"]
    base_hi = _pick(m, big, mid, pio2_hi, pio4_hi, 0.0)
    base_lo = _pick(m, big, mid, pio2_lo, pio4_lo, 0.0)
    res = m.add(base_hi, m.add(m.odd_series(t, "atan"), m.add(base_lo, t_lo)))
    return m.copysign(res, x)


def _atan2(m, y, x):
    """atan2 with C99 specials: angle of (|x|, |y|) in [0, pi/2], reflected for x < 0 or -0."""
    inf = m.c(float("inf"))
    a, b = m.abs(y), m.abs(x)
    both_inf = m.and_(m.cmp("==", a, inf), m.cmp("==", b, inf))
    both_zero = m.and_(m.cmp("==", a, m.c(0.0)), m.cmp("==", b, m.c(0.0)))
    a = m.select(both_inf, m.c(1.0), a)
    b = m.select(m.or_(both_inf, both_zero), m.c(1.0), b)
    # keep a + b finite
    near_max = m.cmp(">", m.maxnum(a, b), m.c(2.0 ** (m.fmt.bias - 2)))
    scale = m.select(near_max, m.c(0.25), m.c(1.0))
    t, t_lo, big, mid = _atan_ratio(m, m.mul(a, scale), m.mul(b, scale))
    reflect = m.signbit(x)
    const = m.const
    hi = m.select(reflect, _pick(m, big, mid, const["pio2"][0], const["3pio4"][0], const["pi"][0]),
                  _pick(m, big, mid, const["pio2"][0], const["pio4"][0], 0.0))
    lo = m.select(reflect, _pick(m, big, mid, const["pio2"][1], const["3pio4"][1], const["pi"][1]),
                  _pick(m, big, mid, const["pio2"][1], const["pio4"][1], 0.0))
    p = m.add(m.odd_series(t, "atan"), t_lo)
    res = m.add(hi, m.add(m.select(reflect, m.neg(p), p), lo))
    return m.copysign(res, y)


def _asin_parts(m, x):
    """(p, big): p = asin(s) with s = x for |x| <= 1/2, else s = sqrt((1-|x|)/2) (big)."""
    a = m.abs(x)
    big = m.cmp(">", a, m.c(0.5))
    z = m.select(big, m.mul(m.c(0.5), m.sub(m.c(1.0), a)), m.mul(x, x))
    s = m.select(big, m.sqrt(z), x)
    return m.fma(m.mul(s, z), m.horner(z, m.coeffs("asin")), s), big


@_via_float64
def _asin(m, x):
    """asin x directly for |x| <= 1/2, else pi/2 - 2 asin(sqrt((1-|x|)/2))."""
    p, big = _asin_parts(m, x)
    pio2_hi, pio2_lo = m.const["pio2"][:2]
    far = m.sub(m.c(pio2_hi), m.sub(m.add(p, p), m.c(pio2_lo)))
    return m.select(big, m.copysign(far, x), p)


@_via_float64
def _acos(m, x):
    """pi/2 - asin x for |x| <= 1/2; 2 asin(sqrt((1-|x|)/2)), reflected to pi - that for x < 0."""
    p, big = _asin_parts(m, x)
    pio2_hi, pio2_lo = m.const["pio2"][:2]
    pi_hi, pi_lo = m.const["pi"]
    near = m.sub(m.c(pio2_hi), m.sub(p, m.c(pio2_lo)))
    twice = m.add(p, p)
    far = m.select(m.cmp("<", x, m.c(0.0)), m.sub(m.c(pi_hi), m.sub(twice, m.c(pi_lo))), twice)
    return m.select(big, far, near)


# ---------------------------------------------------------------- erf

def _erf(m, x):
    """x p(x^2) for |x| <= 1; else 1 - t exp(-x^2 + h(t)), t = 2/(2+|x|), sign of x."""
    small = m.fma(x, m.horner(m.mul(x, x), m.coeffs("erf_small")), x)
    top, scale, shift = _ERF_RANGE[m.fmt.key]
    # clamped to the fitted range also from below: the unused lanes must not underflow in exp
    a = m.clamp_above(m.maxnum(m.abs(x), m.c(1.0)), top)
    t = m.div(m.c(2.0), m.add(m.c(2.0), a))
    h = m.horner(m.fma(t, m.c(scale), m.c(shift)), m.coeffs("erfc_h"))
    sq_hi = m.mul(a, a)
    sq_lo = m.fma(a, a, m.neg(sq_hi))
    erfc = m.mul(t, _exp_core(m, m.sub(m.sub(h, sq_hi), sq_lo), normal_result=True))
    large = m.copysign(m.sub(m.c(1.0), erfc), x)
    return m.select(m.cmp(">", m.abs(x), m.c(1.0)), large, small)


_KERNELS = {
    "exp": _exp, "expm1": _expm1_core, "log": _log, "log1p": _log1p, "log2": _log_of_base("log2"),
    "log10": _log_of_base("log10"),
    "sin": _sin, "cos": _cos, "tan": _tan,
    "sinh": _sinh, "cosh": _cosh, "tanh": _tanh,
    "asin": _asin, "acos": _acos, "atan": _atan, "atan2": _atan2,
    "erf": _erf, "pow": _pow, "asinh": _asinh, "acosh": _acosh, "atanh": _atanh,
}
_ARITY = {"atan2": 2, "pow": 2}


# The vector widths of an outlined kernel's variants: the loop vectorizer calls the one of the width it picks.
VARIANT_LANES = {"f64": (2, 4, 8), "f32": (4, 8, 16)}


def math_function(module, name, ty, outlined=False):
    """`symgrad.<name>.f32|f64` of `module`, defined on first use. Internal and alwaysinline by default,
    so it is inlined into each loop before vectorization. `outlined`: a function compiled once however
    many loops call it (a long program calls it from hundreds: inlined, LLVM would optimize each copy),
    with vector variants LLVM's loop vectorizer calls in its place (the vector-function-abi-variant
    attribute names them)."""
    if name not in _KERNELS:
        raise ValueError(f"no math kernel {name!r}; supported: {', '.join(NAMES)}")
    if not isinstance(ty, (ir.FloatType, ir.DoubleType)):
        raise TypeError(f"math kernels take float or double, not {ty}")
    fmt_key = "f64" if isinstance(ty, ir.DoubleType) else "f32"
    fname = f"symgrad.{name}.{fmt_key}"
    if fname in module.globals:
        return module.globals[fname]
    fn = _define(module, fname, name, ty, None, inlined=not outlined)
    if not outlined:
        fn.attributes.add("alwaysinline")
        return fn
    fn.attributes = _Attributes(fn.attributes)
    fn.attributes.add("noinline")
    arity = _ARITY.get(name, 1)
    variants = [_define(module, f"{fname}.v{lanes}", name, ty, lanes) for lanes in VARIANT_LANES[fmt_key]]
    for variant in variants:  # called once the loops are vectorized, or by loops emitted as vector code (lanes.py)
        variant.attributes.add("alwaysinline" if name in INLINED_AFTER_VECTORIZING else "noinline")
    mangled = ",".join(f"_ZGV_LLVM_N{variant.name.rsplit('.v', 1)[1]}{'v' * arity}_{fname}({variant.name})"
                       for variant in variants)
    fn.attributes.add(f'"vector-function-abi-variant"="{mangled}"')
    _keep_until_vectorized(module, variants)
    return fn


def _define(module, fname, name, ty, lanes, inlined=False):
    """The internal function `fname` computing kernel `name` on `ty`, or on vectors of `lanes` of it.
    `inlined`: it will be inlined into loops, so it must stay straight-line code."""
    arg = ty if lanes is None else ir.VectorType(ty, lanes)
    fn = ir.Function(module, ir.FunctionType(arg, [arg] * _ARITY.get(name, 1)), name=fname)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    m = _Emitter(builder, ty, lanes)
    if name in _LOG_BASES and m.fmt is F32:  # in float64 (its constants are float64's), rounded once
        wide = _Emitter(builder, ir.DoubleType(), lanes)
        builder.ret(builder.fptrunc(_KERNELS[name](wide, builder.fpext(fn.args[0], wide.ty)), m.ty))
    elif name not in _TRIG:
        builder.ret(_KERNELS[name](m, *fn.args))
    elif name == "tan" and m.fmt is F32:  # float32 tan runs in float64: so does its argument's check
        wide = _Emitter(builder, ir.DoubleType(), lanes)
        angle = _trig_argument_of(wide, builder.fpext(fn.args[0], wide.ty), inlined)
        builder.ret(builder.fptrunc(_KERNELS[name](wide, angle), m.ty))
    else:
        builder.ret(_KERNELS[name](m, _trig_argument_of(m, fn.args[0], inlined)))
    return fn


def _trig_argument_of(m, x, inlined):
    """_trig_argument(x); in a kernel to be inlined, as a call: the branch lives in a function of its own,
    whose vector variants the vectorizer calls and jit.optimize then inlines."""
    if not inlined:
        return _trig_argument(m, x)
    return m.b.call(math_function(m.b.module, _TRIG_ARGUMENT, x.type, outlined=True), [x])


_TRIG = ("sin", "cos", "tan")
_TRIG_ARGUMENT = "trig_argument"
# Kernels whose vector variants jit.optimize inlines into the vectorized loops: a branch is fine there,
# where it was not before vectorizing, and a call per vector would cost 10-20% of a sine loop.
INLINED_AFTER_VECTORIZING = (_TRIG_ARGUMENT,)
# How far the fast reduction by pi/2 (_reduce_half_pi) is accurate.
_TRIG_RANGE = {"f64": 2.0 ** 46, "f32": 2.0 ** 22}


def _trig_argument(m, x):
    """x, or, where |x| is finite and beyond the fast reduction's range, the angle in (-pi, pi] with
    libm's sine and cosine of x (glibc reduces exactly), so sin, cos and tan of it are libm's to within
    an ulp of pi. A branch taken only when some lane needs it; inlined kernels call this as a function
    of its own, so their loops stay straight-line and vectorize, and sin and cos of one x share it."""
    magnitude = m.abs(x)
    big = m.and_(m.cmp(">", magnitude, m.c(_TRIG_RANGE[m.fmt.key])), m.cmp("<", magnitude, m.c(float("inf"))))
    b = m.b
    any_big = big if m.lanes is None else b.icmp_unsigned(
        "!=", b.bitcast(big, ir.IntType(m.lanes)), ir.Constant(ir.IntType(m.lanes), 0))
    entry = b.block
    with b.if_then(any_big, likely=False):
        patched = m.select(big, _libm_angle(m, x), x)
        slow = b.block
    merged = b.phi(m.ty)
    merged.add_incoming(x, entry)
    merged.add_incoming(patched, slow)
    return merged


def _libm_angle(m, x):
    """atan2(sin x, cos x) of each lane of x by libm in float64, in x's type."""
    double = ir.DoubleType()

    def one(value):
        wide = value if m.fmt is F64 else m.b.fpext(value, double)
        module = m.b.module
        angle = m.b.call(libm_function(module, "atan2", double), [m.b.call(libm_function(module, "sin", double), [wide]),
                                                                  m.b.call(libm_function(module, "cos", double), [wide])])
        return angle if m.fmt is F64 else m.b.fptrunc(angle, value.type)

    if m.lanes is None:
        return one(x)
    out = ir.Constant(m.ty, ir.Undefined)
    for lane in range(m.lanes):
        index = ir.Constant(ir.IntType(32), lane)
        out = m.b.insert_element(out, one(m.b.extract_element(x, index)), index)
    return out


def libm_function(module, name, ty):
    """libm's `name` on `ty` (sinf for float), declared pure: errno aside, which symgrad never reads, it
    is; and a call that might write memory would keep the loops around it from vectorizing."""
    symbol = name + ("f" if isinstance(ty, ir.FloatType) else "")
    existing = module.globals.get(symbol)
    if existing is not None:
        return existing
    fn = ir.Function(module, ir.FunctionType(ty, [ty] * (2 if name in _LIBM_BINARY else 1)), symbol)
    fn.attributes.add(_LIBM_MARK)
    fn.attributes.add("nounwind")
    return fn


_LIBM_MARK = "readnone"  # what only libm_function's declarations carry


_LIBM_BINARY = ("atan2", "pow", "hypot")


def libm_addresses(module) -> dict[str, int]:
    """The addresses in this process of the libm functions `module` declares (libm_function), for the
    JIT's symbol table and the disk cache's check that every undefined symbol resolves."""
    declared = {fn.name for fn in module.functions if fn.is_declaration and _LIBM_MARK in fn.attributes}
    if declared:  # the optimizer merges sin(x) and cos(x) into one call of sincos
        declared |= {"sincos", "sincosf"}
    libm = _libm_library()
    return {name: ctypes.cast(getattr(libm, name), ctypes.c_void_p).value for name in declared
            if hasattr(libm, name)}


@functools.lru_cache(maxsize=None)
def _libm_library():
    return ctypes.CDLL(ctypes.util.find_library("m"))


class _Attributes(ir.FunctionAttributes):
    """Function attributes that also take the vector-function-abi-variant string attribute (llvmlite
    accepts only the attributes it lists)."""

    def __init__(self, attributes=()):
        super().__init__(attributes)

    def add(self, name):
        if name.startswith('"vector-function-abi-variant"='):
            set.add(self, name)
        else:
            super().add(name)


def _keep_until_vectorized(module, functions):
    """List `functions` in @llvm.compiler.used: nothing calls a vector variant before the vectorizer
    does, and the optimizer would delete it as dead first."""
    used = module.globals.get("llvm.compiler.used")
    if used is None:
        used = ir.GlobalVariable(module, ir.ArrayType(ir.PointerType(), 0), "llvm.compiler.used")
        used.linkage = "appending"
        used.section = "llvm.metadata"
        kept = []
    else:
        kept = list(used.initializer.constant)
    kept += functions
    used.value_type = ir.ArrayType(ir.PointerType(), len(kept))
    used.initializer = ir.Constant(used.value_type, kept)


_KERNELS[_TRIG_ARGUMENT] = _trig_argument
