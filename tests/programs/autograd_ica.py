# HIPS/autograd examples/ica.py: independent component analysis by maximum likelihood, a Student-t log density
# (scipy.stats' t.logpdf with broadcast loc and scale) of a product of reshaped slices of one flat parameter
# vector, minimized by scipy.optimize.minimize's conjugate gradients with value_and_grad (jac=True) and a callback.
# `autograd.numpy` is `symgrad.numpy`, autograd's transforms are `sg`'s. Changed (marked): 12 observed dimensions
# and 30 samples (not 100 and 200), at most 8 CG iterations; figures not drawn; true_weights is NumPy's array (it
# is written into; JAX's are immutable).
from scipy.optimize import minimize

import numpy as onp  # changed: NumPy's own arrays where the program writes into one
import numpy.random as npr  # changed: autograd.numpy.random is NumPy's

import symgrad.numpy as np
from symgrad import value_and_grad
from symgrad.scipy.stats import t


def make_ica_funs(observed_dimension, latent_dimension):
    """These functions implement independent component analysis.

    The model is:
    latents are drawn i.i.d. for each data point from a product of student-ts.
    weights are the same across all datapoints.
    each data = latents * weghts + noise."""

    def sample(weights, n_samples, noise_std, rs):
        latents = rs.randn(latent_dimension, n_samples)
        latents = np.array(sorted(latents.T, key=lambda a_entry: a_entry[0])).T
        noise = rs.randn(n_samples, observed_dimension) * noise_std
        observed = predict(weights, latents) + noise
        return latents, observed

    def predict(weights, latents):
        return np.dot(weights, latents).T

    def logprob(weights, latents, noise_std, observed):
        preds = predict(weights, latents)
        log_lik = np.sum(t.logpdf(preds, 2.4, observed, noise_std))
        return log_lik

    num_weights = observed_dimension * latent_dimension

    def unpack_weights(weights):
        return np.reshape(weights, (observed_dimension, latent_dimension))

    return num_weights, sample, logprob, unpack_weights


if __name__ == "__main__":
    observed_dimension = 12  # changed: 100
    latent_dimension = 2
    true_noise_var = 1.0
    n_samples = 30  # changed: 200

    num_weights, sample, logprob, unpack_weights = make_ica_funs(observed_dimension, latent_dimension)

    num_latent_params = latent_dimension * n_samples
    total_num_params = num_weights + num_latent_params + 1

    def unpack_params(params):
        weights = unpack_weights(params[:num_weights])
        latents = np.reshape(
            params[num_weights : num_weights + num_latent_params], (latent_dimension, n_samples)
        )
        noise_std = np.exp(params[-1])
        return weights, latents, noise_std

    rs = npr.RandomState(0)
    true_weights = onp.zeros((observed_dimension, latent_dimension))  # changed: NumPy's, written
    for i in range(latent_dimension):
        true_weights[:, i] = np.sin(np.linspace(0, 4 + i * 3.2, observed_dimension))

    true_latents, data = sample(true_weights, n_samples, true_noise_var, rs)

    def objective(params):
        weight_matrix, latents, noise_std = unpack_params(params)
        return -logprob(weight_matrix, latents, noise_std, data) / n_samples

    def callback(params):
        weights, latents, noise_std = unpack_params(params)
        print(f"Log likelihood {-objective(params)}, noise_std {noise_std}")

    # Initialize and optimize model.
    rs = npr.RandomState(0)
    init_params = rs.randn(total_num_params)
    result = minimize(value_and_grad(objective), init_params, jac=True, method="CG", callback=callback,
                      options={"maxiter": 8})  # changed: at most 8 iterations
    print(result.fun, result.nit)  # changed: plt.pause(20)
