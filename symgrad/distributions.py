"""torch.distributions' Categorical, Normal and MultivariateNormal over eager tensors: what policy-gradient programs
(pytorch/examples' REINFORCE and actor-critic), VAEs and normalizing flows use, a log-probability to backpropagate
through and a sample to act on, with PyTorch's formulas."""
import math

import numpy as np

from .eager.size import Size

__all__ = ["Categorical", "Normal", "MultivariateNormal"]


class Categorical:
    """A distribution over 0..K-1 along the last axis of `probs` (normalized) or `logits` (unnormalized log
    probabilities); the leading axes are its batch shape."""

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        param = probs if probs is not None else logits
        if param.dim() < 1:
            raise ValueError(f"`{'probs' if probs is not None else 'logits'}` parameter must be at least "
                             "one-dimensional.")
        if probs is not None:
            self.probs = probs / probs.sum(-1, keepdim=True)
            eps = float(np.finfo(probs.dtype).eps)  # torch.distributions.utils.probs_to_logits
            self.logits = self.probs.clamp(min=eps, max=1 - eps).log()
        else:
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
            self.probs = self.logits.softmax(-1)
        self._num_events = param.shape[-1]
        self.batch_shape = Size(param.shape[:-1])
        self.event_shape = Size(())
        # PyTorch's validate_args (on unless False): the parameters and log_prob's values checked, not used as they are
        self._validate_args = validate_args is not False
        if self._validate_args:
            name, value = ("probs", self.probs) if probs is not None else ("logits", self.logits)
            array = value.detach().numpy()
            valid = ((array >= 0).all(-1) & (abs(array.sum(-1) - 1) < 1e-6)) if probs is not None else \
                (array == array).all(-1)
            if not np.all(valid):
                raise ValueError(f"Expected parameter {name} (Tensor of shape {tuple(value.shape)}) of distribution "
                                 f"{self!r} to satisfy the constraint {'Simplex()' if probs is not None else 'Real()'}"
                                 f", but found invalid values:\n{value}")

    @property
    def param_shape(self) -> Size:
        return Size(self.probs.shape)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    def sample(self, sample_shape=()):
        """Indices drawn with `probs` (symgrad's generator: not PyTorch's numbers), of shape sample_shape +
        batch_shape."""
        sample_shape = Size(sample_shape)
        probs_2d = self.probs.detach().reshape(-1, self._num_events)
        samples_2d = probs_2d.multinomial(math.prod(sample_shape), True).T
        return samples_2d.reshape(tuple(sample_shape) + tuple(self.batch_shape))

    def log_prob(self, value):
        """log probs[value], broadcasting `value` against the batch shape."""
        if self._validate_args:
            array = value.detach().numpy()
            if not np.all((array % 1 == 0) & (array >= 0) & (array <= self._num_events - 1)):
                raise ValueError(f"Expected value argument (Tensor of shape {tuple(value.shape)}) to be within the "
                                 f"support (IntegerInterval(lower_bound=0, upper_bound={self._num_events - 1})) of the "
                                 f"distribution {self!r}, but found invalid values:\n{value}")
        value = value.long().unsqueeze(-1)
        shape = np.broadcast_shapes(tuple(value.shape[:-1]), tuple(self.batch_shape))
        logits = self.logits.expand(*shape, self._num_events)
        return logits.gather(-1, value.expand(*shape, 1)).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=float(np.finfo(self.logits.dtype).min))
        return -(logits * self.probs).sum(-1)

    def __repr__(self):
        return f"Categorical(probs: {self.param_shape}, logits: {self.param_shape})"


def _as_tensors(*values):
    """torch.distributions.utils.broadcast_all: numbers made tensors of the tensors' dtype, all broadcast."""
    from . import broadcast_tensors, tensor
    from .eager.tensor import Tensor
    dtype = next((v.dtype for v in values if isinstance(v, Tensor)), None)
    return broadcast_tensors(*(v if isinstance(v, Tensor) else tensor(float(v), dtype=dtype) for v in values))


def _refuse(distribution, name, value, constraint):
    raise ValueError(f"Expected parameter {name} (Tensor of shape {tuple(value.shape)}) of distribution "
                     f"{distribution!r} to satisfy the constraint {constraint}, but found invalid values:\n{value}")


class Normal:
    """The normal distribution of mean `loc` and standard deviation `scale` (broadcast: the batch shape)."""

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _as_tensors(loc, scale)
        self.batch_shape, self.event_shape = Size(self.loc.shape), Size(())
        if validate_args is not False:
            if not np.all(self.loc.detach().numpy() == self.loc.detach().numpy()):
                _refuse(self, "loc", self.loc, "Real()")
            if not np.all(self.scale.detach().numpy() > 0):
                _refuse(self, "scale", self.scale, "GreaterThan(lower_bound=0.0)")

    mean = mode = property(lambda self: self.loc)
    stddev = property(lambda self: self.scale)
    variance = property(lambda self: self.scale ** 2)

    def rsample(self, sample_shape=()):
        """loc + eps * scale, eps standard normal (symgrad's generator: not PyTorch's numbers), differentiable in
        loc and scale; of shape sample_shape + batch_shape."""
        from . import randn
        eps = randn(*Size(sample_shape), *self.batch_shape, dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def sample(self, sample_shape=()):
        return self.rsample(sample_shape).detach()

    def log_prob(self, value):
        return -((value - self.loc) ** 2) / (2 * self.variance) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    def __repr__(self):
        return f"Normal(loc: {self.loc.size()}, scale: {self.scale.size()})"


class MultivariateNormal:
    """The normal distribution over the last axis of `loc` with one of covariance_matrix, precision_matrix or
    scale_tril (its lower Cholesky factor, which every formula uses, as PyTorch's)."""

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        from . import linalg, tensor
        given = [(name, m) for name, m in (("covariance_matrix", covariance_matrix),
                                            ("precision_matrix", precision_matrix), ("scale_tril", scale_tril))
                 if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, matrix = given[0]
        if loc.dim() < 1 or matrix.dim() < 2:
            raise ValueError("loc must be at least one-dimensional and " + name + " at least two-dimensional, with "
                             f"optional leading batch dimensions: got {tuple(loc.shape)} and {tuple(matrix.shape)}")
        k = loc.shape[-1]
        batch = np.broadcast_shapes(tuple(loc.shape[:-1]), tuple(matrix.shape[:-2]))
        self.loc, self.batch_shape, self.event_shape = loc.expand(*batch, k), Size(batch), Size((k,))
        if validate_args is not False and name != "scale_tril" and \
                not np.all(np.linalg.eigvalsh(matrix.detach().numpy()) > 0):
            _refuse(self, name, matrix, "PositiveDefinite()")
        if name == "scale_tril":
            tril = matrix
        elif name == "covariance_matrix":
            tril = linalg.cholesky(matrix)
        else:  # torch.distributions.multivariate_normal._precision_to_scale_tril
            flipped = linalg.cholesky(matrix.flip((-2, -1))).flip((-2, -1)).mT
            identity = np.broadcast_to(np.eye(k, dtype=matrix.dtype), tuple(matrix.shape))
            tril = linalg.solve_triangular(flipped, tensor(identity.copy()), lower=True)
        self._tril = tril.expand(*batch, k, k)

    mean = mode = property(lambda self: self.loc)
    scale_tril = property(lambda self: self._tril)
    covariance_matrix = property(lambda self: self._tril @ self._tril.mT)
    precision_matrix = property(lambda self: self.covariance_matrix.inverse())
    variance = property(lambda self: self._tril.pow(2).sum(-1))

    def rsample(self, sample_shape=()):
        """loc + scale_tril @ eps, eps standard normal (symgrad's generator: not PyTorch's numbers)."""
        from . import randn
        eps = randn(*Size(sample_shape), *self.batch_shape, *self.event_shape, dtype=self.loc.dtype)
        return self.loc + (self._tril @ eps.unsqueeze(-1)).squeeze(-1)

    def sample(self, sample_shape=()):
        return self.rsample(sample_shape).detach()

    def log_prob(self, value):
        """-(k log 2 pi + |L^-1 (value - loc)|^2) / 2 - log det L, batched over value's leading axes."""
        from . import linalg
        diff = value - self.loc
        k, shape = self.event_shape[0], tuple(diff.shape[:-1])
        y = linalg.solve_triangular(self._tril.expand(*shape, k, k), diff.unsqueeze(-1), lower=True).squeeze(-1)
        return -0.5 * (k * math.log(2 * math.pi) + y.pow(2).sum(-1)) - self._half_log_det()

    def entropy(self):
        return 0.5 * self.event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()

    def _half_log_det(self):
        return self._tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def __repr__(self):
        return f"MultivariateNormal(loc: {self.loc.size()}, covariance_matrix: {self.loc.size() + self.event_shape})"

