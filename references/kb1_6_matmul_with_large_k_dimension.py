"""kb1_6_matmul_with_large_k_dimension: KernelBench level 1, problem 6 (Matmul_with_large_K_dimension_).

Imported by `kernelgen import kernelbench` from KernelBench/level1/6_Matmul_with_large_K_dimension_.py.

At the problem's own size (M=256, N=256, K=524288):
- A: ['M', 'K'] float32
- B: ['K', 'N'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: M 256 -> 64/65, N 256 -> 128/131, K 524288 -> 128/129
Note: domain: M, N, K drawn

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
    Simple model that performs a single matrix multiplication (C = A * B) with a large K dimension
    """
    def __init__(self):
        super(Model, self).__init__()
    
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Performs matrix multiplication of A and B.

        Args:
            A: Input tensor of shape (M, K)
            B: Input tensor of shape (K, N)

        Returns:
            Output tensor of shape (M, N)
        """
        return torch.matmul(A, B)

M = 256
N = 256
K = 131072 * 4

def get_inputs():
    A = torch.rand(M, K)
    B = torch.rand(K, N)
    return [A, B]

def get_init_inputs():
    return []  # No special initialization inputs needed'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: K, the terms each output sums (aten mm, run on the meta device at 9 sizes)
# - value families: small, ties, neg_inf, specials; not normal (reach: 1 of 1 entries off, |err|
#   0.0156 > atol 0.00019 + rtol 1.3e-06*|ref|); uniform (reach: 1 of 1 entries off, |err|
#   0.000412 > atol 0.00019 + rtol 1.3e-06*|ref|); wide (small: 433 of 8192 entries off, |err|
#   0.0114 > atol 7e-05 + rtol 1.3e-06*|ref|); large (small: 298 of 8192 entries off, |err|
#   2.52e+16 > atol 7e-05 + rtol 1.3e-06*|ref|); spike (small: 68 of 8192 entries off, |err|
#   0.00112 > atol 7e-05 + rtol 1.3e-06*|ref|); negative (reach: 1 of 1 entries off, |err|
#   3.36e+04 > atol 0.00019 + rtol 1.3e-06*|ref|); sorted_up (small: 1 of 8192 entries off, |err|
#   7.33e-05 > atol 7e-05 + rtol 1.3e-06*|ref|); sorted_down (small: 1 of 8192 entries off, |err|
#   0.0001 > atol 7e-05 + rtol 1.3e-06*|ref|); constant (reach: 1 of 1 entries off, |err|
#   0.000371 > atol 0.00019 + rtol 1.3e-06*|ref|); denormal (reach: 1 of 1 entries off, |err|
#   0.000585 > atol 0.00019 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset
# - probed at the CPU sizes and at reach:K=524288 (the longest reduction)
# - dims: M 1..256, N 1..256, K 1..524288 (the least and the blocks each takes, tried on the meta
#   device from the CPU size)
SPEC = {'inputs': [{'name': 'A', 'shape': ['M', 'K']}, {'name': 'B', 'shape': ['K', 'N']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem', 'dims': {'M': 256, 'N': 256, 'K': 524288}, 'interpreter': False},
           {'name': 'small', 'dims': {'M': 64, 'N': 128, 'K': 128}, 'interpreter': True},
           {'name': 'odd', 'dims': {'M': 65, 'N': 131, 'K': 129}, 'interpreter': True}],
 'bench': [{'name': 'problem', 'dims': {'M': 256, 'N': 256, 'K': 524288}, 'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/6_Matmul_with_large_K_dimension_.py',
            'sha256': '18287323c43d000af0eaf384d8e142424182fb48e17cc317fc7009bb345bd7b0',
            'level': 1,
            'problem': 6,
            'title': 'Matmul_with_large_K_dimension_',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: M 256 -> 64/65, N 256 -> 128/131, "
                      'K 524288 -> 128/129',
                      'domain: M, N, K drawn']},
 'reduction': 'K',
 'domain': {'dims': {'M': {'range': [1, 256], 'cpu_max': 65},
                     'N': {'range': [1, 256], 'cpu_max': 131},
                     'K': {'range': [1, 524288], 'cpu_max': 129}},
            'dtypes': ['float32'],
            'layouts': ['contiguous', 'strided', 'transposed', 'offset'],
            'dists': ['small', 'ties', 'neg_inf', 'specials']}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'M': ['M', None], 'N': ['N', None], 'K': ['K', None]},
 'inputs': [{'name': 'A', 'draw': 'judge'}, {'name': 'B', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'M': 256, 'N': 256, 'K': 524288},
  'bytes': 1074003968,
  'flops': 68719476736},
 {'size': 'small', 'dims': {'M': 64, 'N': 128, 'K': 128}, 'bytes': 131072, 'flops': 2097152},
 {'size': 'odd', 'dims': {'M': 65, 'N': 131, 'K': 129}, 'bytes': 135196, 'flops': 2196870}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb1_6_matmul_with_large_k_dimension', SOURCE, SPEC, PLAN, DERIVED)


def kb1_6_matmul_with_large_k_dimension(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(A, B)


def eager(A, B):
    return PROBLEM.eager(A, B)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
