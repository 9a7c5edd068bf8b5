"""kb1_7_matmul_with_small_k_dimension: KernelBench level 1, problem 7 (Matmul_with_small_K_dimension_).

Imported by `kernelgen import kernelbench` from KernelBench/level1/7_Matmul_with_small_K_dimension_.py.

At the problem's own size (M=32768, N=32768, K=64):
- A: ['M', 'K'] float32
- B: ['K', 'N'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: M 32768 -> 128/129, N 32768 -> 128/131
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
    Simple model that performs a single matrix multiplication (C = A * B) with a small K dimension
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

M = 16384 * 2
N = 16384 * 2
K = 32 * 2

def get_inputs():
    A = torch.rand(M, K)
    B = torch.rand(K, N)
    return [A, B]

def get_init_inputs():
    return []  # No special initialization inputs needed'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: K, the terms each output sums (aten mm, run on the meta device at 9 sizes)
# - value families: normal, uniform, small, negative, sorted_up, sorted_down, constant, ties,
#   denormal, neg_inf, specials; not wide (small: 565 of 16384 entries off, |err| 0.00318 > atol
#   6e-05 + rtol 1.3e-06*|ref|); large (small: 288 of 16384 entries off, |err| 1.51e+15 > atol
#   6e-05 + rtol 1.3e-06*|ref|); spike (small: 53 of 16384 entries off, |err| 0.000405 > atol
#   6e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset
# - probed at the CPU sizes and at reach:K=64 (the longest reduction)
# - dims: M 1..32768, N 1..32768, K 1..64 (the least and the blocks each takes, tried on the meta
#   device from the CPU size)
SPEC = {'inputs': [{'name': 'A', 'shape': ['M', 'K']}, {'name': 'B', 'shape': ['K', 'N']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem', 'dims': {'M': 32768, 'N': 32768, 'K': 64}, 'interpreter': False},
           {'name': 'small', 'dims': {'M': 128, 'N': 128, 'K': 64}, 'interpreter': True},
           {'name': 'odd', 'dims': {'M': 129, 'N': 131, 'K': 64}, 'interpreter': True}],
 'bench': [{'name': 'problem', 'dims': {'M': 32768, 'N': 32768, 'K': 64}, 'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/7_Matmul_with_small_K_dimension_.py',
            'sha256': '66b12b830db873ab706900ffb52abd9fa43321829eee40a27d395441db2f2966',
            'level': 1,
            'problem': 7,
            'title': 'Matmul_with_small_K_dimension_',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: M 32768 -> 128/129, N 32768 -> "
                      '128/131',
                      'domain: M, N, K drawn']},
 'reduction': 'K',
 'domain': {'dims': {'M': {'range': [1, 32768], 'cpu_max': 129},
                     'N': {'range': [1, 32768], 'cpu_max': 131},
                     'K': {'range': [1, 64]}},
            'dtypes': ['float32'],
            'layouts': ['contiguous', 'strided', 'transposed', 'offset'],
            'dists': ['normal',
                      'uniform',
                      'small',
                      'negative',
                      'sorted_up',
                      'sorted_down',
                      'constant',
                      'ties',
                      'denormal',
                      'neg_inf',
                      'specials']}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'M': ['M', None], 'N': ['N', None], 'K': ['K', None]},
 'inputs': [{'name': 'A', 'draw': 'judge'}, {'name': 'B', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'M': 32768, 'N': 32768, 'K': 64},
  'bytes': 4311744512,
  'flops': 137438953472},
 {'size': 'small', 'dims': {'M': 128, 'N': 128, 'K': 64}, 'bytes': 131072, 'flops': 2097152},
 {'size': 'odd', 'dims': {'M': 129, 'N': 131, 'K': 64}, 'bytes': 134156, 'flops': 2163072}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb1_7_matmul_with_small_k_dimension', SOURCE, SPEC, PLAN, DERIVED)


def kb1_7_matmul_with_small_k_dimension(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(A, B)


def eager(A, B):
    return PROBLEM.eager(A, B)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
