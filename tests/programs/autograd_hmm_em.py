# HIPS/autograd examples/hmm_em.py: a hidden Markov model fitted by expectation-maximization, where the E step's
# expected statistics are the gradient of the log partition function (the forward algorithm: logsumexp over a loop
# of the characters, log_B[:, y] indexed by a traced integer) with respect to the natural parameters, through
# value_and_grad over a list of sequences. `autograd.numpy` is `symgrad.numpy`, autograd's transforms are `sg`'s.
# Changed (marked): the text is a fixed string of 4 lines instead of examples/lstm.py, 4 states instead of 20, at
# most 6 EM steps; np.seterr is NumPy's (neither symgrad.numpy nor jax.numpy has it).
import string
from functools import partial

import numpy as onp  # changed: np.seterr is NumPy's
import numpy.random as npr  # changed: autograd.numpy.random is NumPy's

import symgrad.numpy as np
from symgrad import value_and_grad as vgrad
from symgrad.scipy.special import logsumexp

TEXT = """def sigmoid(x):
    return 0.5 * (np.tanh(x) + 1.0)
def concat(weights, *args):
    return np.dot(args, weights)
""".splitlines(keepends=True)  # changed: the text to learn


def EM(init_params, data, callback=None):
    def EM_update(params):
        natural_params = list(map(np.log, params))
        loglike, E_stats = vgrad(log_partition_function)(natural_params, data)  # E step
        if callback:
            callback(loglike, params)
        return list(map(normalize, E_stats))  # M step

    def fixed_point(f, x0):
        x1 = f(x0)
        for _ in range(5):  # changed: at most 6 steps, while different(x0, x1)
            if not different(x0, x1):  # changed
                break  # changed
            x0, x1 = x1, f(x1)
        return x1

    def different(params1, params2):
        allclose = partial(np.allclose, atol=1e-3, rtol=1e-3)
        return not all(map(allclose, params1, params2))

    return fixed_point(EM_update, init_params)


def normalize(a):
    def replace_zeros(a):
        return np.where(a > 0.0, a, 1.0)

    return a / replace_zeros(a.sum(-1, keepdims=True))


def log_partition_function(natural_params, data):
    if isinstance(data, list):
        return sum(map(partial(log_partition_function, natural_params), data))

    log_pi, log_A, log_B = natural_params

    log_alpha = log_pi
    for y in data:
        log_alpha = logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, y]

    return logsumexp(log_alpha)


def initialize_hmm_parameters(num_states, num_outputs):
    init_pi = normalize(npr.rand(num_states))
    init_A = normalize(npr.rand(num_states, num_states))
    init_B = normalize(npr.rand(num_states, num_outputs))
    return init_pi, init_A, init_B


def build_dataset(lines, max_lines=-1):  # changed: lines, not a file name
    """Loads a text file, and turns each line into an encoded sequence."""
    encodings = dict(list(map(reversed, enumerate(string.printable))))
    digitize = lambda char: encodings[char] if char in encodings else len(encodings)
    encode_line = lambda line: np.array(list(map(digitize, line)))
    nonblank_line = lambda line: len(line) > 2

    encoded_lines = list(map(encode_line, list(filter(nonblank_line, lines))[:max_lines]))
    num_outputs = len(encodings) + 1

    return encoded_lines, num_outputs


if __name__ == "__main__":
    npr.seed(0)  # changed: np.random is NumPy's
    onp.seterr(divide="ignore")  # changed: NumPy's

    # callback to print log likelihoods during training
    print_loglike = lambda loglike, params: print(loglike)

    # load training data
    train_inputs, num_outputs = build_dataset(TEXT, max_lines=60)  # changed: the fixed text

    # train with EM
    num_states = 4  # changed: 20
    init_params = initialize_hmm_parameters(num_states, num_outputs)
    pi, A, B = EM(init_params, train_inputs, print_loglike)
    print(pi, A.sum(), B.max())  # changed: the fitted parameters printed
