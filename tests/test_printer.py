"""Golden tests of the printed IR, the verifier on broken graphs, and pickling graphs."""
import copy
import pickle

import numpy as np
import pytest

import symgrad as sg
from symgrad import ir


def f(x, w):
    return sg.sum(sg.tanh(x @ w))


X, W = np.ones((4, 3)), np.ones((3, 2))

FORWARD = """\
def f(x: f64[4,3], w: f64[3,2]) -> f64[]:
  v0: f64[4,2] = matmul x w
  v1: f64[4,2] = tanh v0
  v2: f64[]    = reduce_sum[axes=(0, 1)] v1
  return v2"""

VALUE_AND_GRAD = """\
def f_value_and_grad(x: f64[4,3], w: f64[3,2]) -> (f64[], f64[4,3], f64[3,2]):
  # forward
  v0: f64[4,2]    = matmul x w
  v1: f64[4,2]    = tanh v0
  v2: f64[]       = reduce_sum[axes=(0, 1)] v1
  # backward
  ct_v2: f64[]    = const[value=1.]                   # seed
  ct_v1: f64[4,2] = broadcast_to[shape=(4, 2)] ct_v2  # reduce_sum
  ct_v0: f64[4,2] = ew[g*(1 - y**2)] ct_v1 v1         # tanh (SymPy)
  v3: f64[2,3]    = transpose[perm=(1, 0)] w          # matmul
  ct_x: f64[4,3]  = matmul ct_v0 v3                   # matmul
  v4: f64[3,4]    = transpose[perm=(1, 0)] x          # matmul
  ct_w: f64[3,2]  = matmul v4 ct_v0                   # matmul
  return v2, ct_x, ct_w"""

FLOAT32 = """\
def f(x: f32[4,3], w: f32[3,2]) -> f32[]:
  v0: f32[4,2] = matmul x w
  v1: f32[4,2] = tanh v0
  v2: f32[]    = reduce_sum[axes=(0, 1)] v1
  return v2"""

WITH_CONSTANT = """\
def scaled(x: f64[3]) -> f64[]:
  v0: f64[3] = const[value=[1., 2., 3.]]
  v1: f64[3] = multiply x v0
  v2: f64[3] = ew[x0 + 2.5] v1
  v3: f64[]  = reduce_sum[axes=(0,)] v2
  return v3"""


def scaled(x):
    return sg.sum(x * np.array([1.0, 2.0, 3.0]) + 2.5)


def test_forward_graph_golden():
    assert str(sg.trace(f, X, W)) == FORWARD


def test_value_and_grad_graph_golden():
    graph = sg.trace(sg.value_and_grad(f, argnums=(0, 1)), X, W)
    assert str(graph) == VALUE_AND_GRAD
    # the tanh rule reads the output v1, never the pre-activation v0
    backward = [n for n in graph.nodes if n.meta.get("section") == "backward"]
    assert all(graph.nodes[0].out not in n.inputs for n in backward)


def test_float32_graph_golden():
    assert str(sg.trace(f, X.astype(np.float32), W.astype(np.float32))) == FLOAT32


def test_constant_graph_golden():
    assert str(sg.trace(scaled, np.ones(3))) == WITH_CONSTANT


def test_printing_is_deterministic_and_values_do_not_matter():
    rng = np.random.default_rng(3)
    assert str(sg.trace(f, rng.normal(size=(4, 3)), rng.normal(size=(3, 2)))) == FORWARD
    assert str(sg.trace(f, X, W)) == str(sg.trace(f, X, W))


def test_verify_accepts_traced_graphs():
    graph = sg.trace(sg.value_and_grad(f, argnums=(0, 1)), X, W)
    assert ir.verify(graph) is graph


def test_verify_rejects_a_wrong_declared_shape():
    graph = sg.trace(f, X, W)
    graph.nodes[1].out.shape = (4, 3)  # tanh of a (4, 2) value declared as (4, 3)
    with pytest.raises(ir.IRError, match=r"f64\[4,3\].*f64\[4,2\]"):
        ir.verify(graph)


def test_verify_rejects_a_wrong_declared_dtype():
    graph = sg.trace(f, X, W)
    graph.nodes[0].out.dtype = np.dtype(np.float32)
    with pytest.raises(ir.IRError, match="matmul"):
        ir.verify(graph)


def test_verify_rejects_use_before_definition_and_undefined_outputs():
    graph = sg.trace(f, X, W)
    broken = ir.Graph(graph.inputs, [graph.nodes[1], graph.nodes[0], graph.nodes[2]], graph.outputs)
    with pytest.raises(ir.IRError, match="before it is defined"):
        ir.verify(broken)
    missing = ir.Graph(graph.inputs, graph.nodes[:2], graph.outputs)
    with pytest.raises(ir.IRError, match="not defined"):
        ir.verify(missing)
    twice = ir.Graph(graph.inputs, graph.nodes + [graph.nodes[2]], graph.outputs)
    with pytest.raises(ir.IRError, match="twice"):
        ir.verify(twice)


@pytest.mark.parametrize("make", [
    lambda: sg.trace(f, X, W),
    lambda: sg.trace(sg.value_and_grad(f, argnums=(0, 1)), X, W),
    lambda: sg.trace(scaled, np.ones(3)),
])
def test_pickle_round_trip(make):
    graph = make()
    clone = pickle.loads(pickle.dumps(graph))
    assert str(clone) == str(graph)
    assert clone == graph and hash(clone) == hash(graph)
    assert str(ir.verify(copy.deepcopy(graph))) == str(graph)


def test_a_pickled_graph_loads_in_a_fresh_process(tmp_path):
    """Unpickling imports the module defining each primitive, as pickle imports a class's module."""
    import subprocess
    import sys
    path = tmp_path / "graph.pkl"
    graph = sg.trace(sg.value_and_grad(f, argnums=(0, 1)), X, W)
    path.write_bytes(pickle.dumps(graph))
    code = f"import pickle; print(pickle.loads(open({str(path)!r}, 'rb').read()))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(graph)


def test_primitive_names_are_unique():
    """A name identifies a primitive in printed, cached and pickled graphs: a second one is refused."""
    with pytest.raises(ValueError, match="a primitive named 'matmul' exists already, defined in symgrad.ops.linalg"):
        sg.core.Primitive("matmul", lambda inputs: (inputs[0].shape, inputs[0].dtype), lambda x: x)
