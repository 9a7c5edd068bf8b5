"""kb1_4_matrix_vector_multiplication: KernelBench level 1, problem 4 (Matrix_vector_multiplication_).

Imported by `kernelgen import kernelbench` from KernelBench/level1/4_Matrix_vector_multiplication_.py.

At the problem's own size (M=2048, K=1048576):
- A: ['M', 'K'] float32
- B: ['K', 1] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: M 2048 -> 128/131, K 1048576 -> 128/129
Note: domain: M, K drawn

The reference runs the problem's own Model (SOURCE below, the file as imported: SPEC["origin"]
holds its sha256) through kernelgen/kernelbench/runtime.py, its parameters and buffers passed in
as inputs; that module's docstring says how each input is drawn. Import the problem again rather
than editing this file.
"""

import torch

from kernelgen.kernelbench.drawn import DrawnProblem

SOURCE = r'''import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Simple model that performs matrix-vector multiplication (C = A * B).
    """
    def __init__(self):
        super(Model, self).__init__()
    
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Performs matrix-vector multiplication.

        Args:
            A: Input matrix of shape (M, K).
            B: Input vector of shape (K, 1).

        Returns:
            Output vector of shape (M, 1).
        """
        return torch.matmul(A, B)

M = 256 * 8 # 2048
K = 131072 * 8 # 1048576

def get_inputs():
    A = torch.rand(M, K)
    B = torch.rand(K, 1)
    return [A, B]

def get_init_inputs():
    return []  # No special initialization inputs needed'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: K, the terms each output sums (aten mm, run on the meta device at 8 sizes)
# - value families: small, ties, neg_inf, specials; not normal (reach: 1 of 1 entries off, |err|
#   0.00573 > atol 0.0002 + rtol 1.3e-06*|ref|); uniform (reach: 1 of 1 entries off, |err|
#   0.00195 > atol 0.0002 + rtol 1.3e-06*|ref|); wide (small: 5 of 128 entries off, |err| 0.0073
#   > atol 7e-05 + rtol 1.3e-06*|ref|); large (small: 2 of 128 entries off, |err| 2.81e+16 > atol
#   7e-05 + rtol 1.3e-06*|ref|); spike (reach: 1 of 1 entries off, |err| 17.1 > atol 0.0002 +
#   rtol 1.3e-06*|ref|); negative (reach: 1 of 1 entries off, |err| 1.77e+05 > atol 0.0002 + rtol
#   1.3e-06*|ref|); sorted_up (reach: 1 of 1 entries off, |err| 0.0021 > atol 0.0002 + rtol
#   1.3e-06*|ref|); sorted_down (reach: 1 of 1 entries off, |err| 0.0245 > atol 0.0002 + rtol
#   1.3e-06*|ref|); constant (reach: 1 of 1 entries off, |err| 0.00576 > atol 0.0002 + rtol
#   1.3e-06*|ref|); denormal (reach: 1 of 1 entries off, |err| 0.00186 > atol 0.0002 + rtol
#   1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset
# - probed at the CPU sizes and at reach:K=1048576 (the longest reduction)
# - dims: M 1..2048, K 1..1048576 (the least and the blocks each takes, tried on the meta device
#   from the CPU size)
SPEC = {'inputs': [{'name': 'A', 'shape': ['M', 'K']}, {'name': 'B', 'shape': ['K', 1]}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem', 'dims': {'M': 2048, 'K': 1048576}, 'interpreter': False},
           {'name': 'small', 'dims': {'M': 128, 'K': 128}, 'interpreter': True},
           {'name': 'odd', 'dims': {'M': 131, 'K': 129}, 'interpreter': True}],
 'bench': [{'name': 'problem', 'dims': {'M': 2048, 'K': 1048576}, 'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/4_Matrix_vector_multiplication_.py',
            'sha256': '5f1476dfcbd291f393d469a2645ff628f1e393bd720c2fe36d5fa4f9181dd8a1',
            'level': 1,
            'problem': 4,
            'title': 'Matrix_vector_multiplication_',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: M 2048 -> 128/131, K 1048576 -> "
                      '128/129',
                      'domain: M, K drawn']},
 'reduction': 'K',
 'domain': {'dims': {'M': {'range': [1, 2048], 'cpu_max': 131},
                     'K': {'range': [1, 1048576], 'cpu_max': 129}},
            'dtypes': ['float32'],
            'layouts': ['contiguous', 'strided', 'transposed', 'offset'],
            'dists': ['small', 'ties', 'neg_inf', 'specials']}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'M': ['M', None], 'K': ['K', None]},
 'inputs': [{'name': 'A', 'draw': 'judge'}, {'name': 'B', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem', 'dims': {'M': 2048, 'K': 1048576}, 'bytes': 8594137088, 'flops': 4294967296},
 {'size': 'small', 'dims': {'M': 128, 'K': 128}, 'bytes': 66560, 'flops': 32768},
 {'size': 'odd', 'dims': {'M': 131, 'K': 129}, 'bytes': 68636, 'flops': 33798}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb1_4_matrix_vector_multiplication', SOURCE, SPEC, PLAN, DERIVED)


def kb1_4_matrix_vector_multiplication(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(A, B)


def eager(A, B):
    return PROBLEM.eager(A, B)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
