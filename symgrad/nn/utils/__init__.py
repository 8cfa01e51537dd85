"""`sg.nn.utils`: gradient clipping, parameters as one vector, `rnn.pad_sequence`, `parametrize`,
`parametrizations.weight_norm` and `prune`'s unstructured basics, with PyTorch's names."""
from . import rnn  # noqa: F401
from .clip_grad import clip_grad_norm_, clip_grad_value_  # noqa: F401
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from . import parametrize, parametrizations, prune  # noqa: F401,E402
