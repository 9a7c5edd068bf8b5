"""kb1_2_standard_matrix_multiplication: KernelBench level 1, problem 2 (Standard_matrix_multiplication_).

Imported by `kernelgen import kernelbench` from KernelBench/level1/2_Standard_matrix_multiplication_.py.

At the problem's own size (M=2048, K=8192, N=4096):
- A: ['M', 'K'] float32
- B: ['K', 'N'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: M 2048 -> 64/65, K 8192 -> 128/129, N 4096 -> 128/131
Note: domain: M, K, N drawn

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
    Simple model that performs a single matrix multiplication (C = A * B)
    """
    def __init__(self):
        super(Model, self).__init__()
    
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Performs matrix multiplication.

        Args:
            A: Input tensor of shape (M, K).
            B: Input tensor of shape (K, N).

        Returns:
            Output tensor of shape (M, N).
        """
        return torch.matmul(A, B)

M = 1024 * 2
K = 4096 * 2
N = 2048 * 2

def get_inputs():
    A = torch.rand(M, K)
    B = torch.rand(K, N)
    return [A, B]

def get_init_inputs():
    return []  # No special initialization inputs needed'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: K, the terms each output sums (aten mm, run on the meta device at 9 sizes)
# - value families: normal, uniform, small, negative, constant, ties, denormal, neg_inf,
#   specials; not wide (small: 454 of 8192 entries off, |err| 0.00712 > atol 7e-05 + rtol
#   1.3e-06*|ref|); large (small: 260 of 8192 entries off, |err| 1.9e+16 > atol 7e-05 + rtol
#   1.3e-06*|ref|); spike (small: 68 of 8192 entries off, |err| 0.000834 > atol 7e-05 + rtol
#   1.3e-06*|ref|); sorted_up (small: 1 of 8192 entries off, |err| 9.96e-05 > atol 7e-05 + rtol
#   1.3e-06*|ref|); sorted_down (small: 1 of 8192 entries off, |err| 7.34e-05 > atol 7e-05 + rtol
#   1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset
# - probed at the CPU sizes and at reach:K=8192 (the longest reduction)
# - dims: M 1..2048, K 1..8192, N 1..4096 (the least and the blocks each takes, tried on the meta
#   device from the CPU size)
SPEC = {'inputs': [{'name': 'A', 'shape': ['M', 'K']}, {'name': 'B', 'shape': ['K', 'N']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem', 'dims': {'M': 2048, 'K': 8192, 'N': 4096}, 'interpreter': False},
           {'name': 'small', 'dims': {'M': 64, 'K': 128, 'N': 128}, 'interpreter': True},
           {'name': 'odd', 'dims': {'M': 65, 'K': 129, 'N': 131}, 'interpreter': True}],
 'bench': [{'name': 'problem', 'dims': {'M': 2048, 'K': 8192, 'N': 4096}, 'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/2_Standard_matrix_multiplication_.py',
            'sha256': '136a33c4d598d07cd7931ef8c0eff4e683c221af6fc43c2d89b6632d3f9902a0',
            'level': 1,
            'problem': 2,
            'title': 'Standard_matrix_multiplication_',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: M 2048 -> 64/65, K 8192 -> "
                      '128/129, N 4096 -> 128/131',
                      'domain: M, K, N drawn']},
 'reduction': 'K',
 'domain': {'dims': {'M': {'range': [1, 2048], 'cpu_max': 65},
                     'K': {'range': [1, 8192], 'cpu_max': 129},
                     'N': {'range': [1, 4096], 'cpu_max': 131}},
            'dtypes': ['float32'],
            'layouts': ['contiguous', 'strided', 'transposed', 'offset'],
            'dists': ['normal',
                      'uniform',
                      'small',
                      'negative',
                      'constant',
                      'ties',
                      'denormal',
                      'neg_inf',
                      'specials']}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'M': ['M', None], 'K': ['K', None], 'N': ['N', None]},
 'inputs': [{'name': 'A', 'draw': 'judge'}, {'name': 'B', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'M': 2048, 'K': 8192, 'N': 4096},
  'bytes': 234881024,
  'flops': 137438953472},
 {'size': 'small', 'dims': {'M': 64, 'K': 128, 'N': 128}, 'bytes': 131072, 'flops': 2097152},
 {'size': 'odd', 'dims': {'M': 65, 'K': 129, 'N': 131}, 'bytes': 135196, 'flops': 2196870}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb1_2_standard_matrix_multiplication', SOURCE, SPEC, PLAN, DERIVED)


def kb1_2_standard_matrix_multiplication(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(A, B)


def eager(A, B):
    return PROBLEM.eager(A, B)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
