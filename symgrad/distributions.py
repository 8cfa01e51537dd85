"""torch.distributions' Categorical over eager tensors: what policy-gradient programs (pytorch/examples' REINFORCE and
actor-critic) use, a log-probability to backpropagate through and a sample to act on, with PyTorch's formulas."""
import math

import numpy as np

from .eager.size import Size

__all__ = ["Categorical"]


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
