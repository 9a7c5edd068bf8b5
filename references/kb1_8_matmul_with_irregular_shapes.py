"""kb1_8_matmul_with_irregular_shapes: KernelBench level 1, problem 8 (Matmul_with_irregular_shapes_).

Imported by `kernelgen import kernelbench` from KernelBench/level1/8_Matmul_with_irregular_shapes_.py.

At the problem's own size (M=8205, K=2949, N=5921):
- A: ['M', 'K'] float32
- B: ['K', 'N'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: M 8205 -> 129/131, K 2949 -> 93/95, N 5921 -> 93/97
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
    Simple model that performs a single matrix multiplication (C = A * B) with irregular shapes
    """
    def __init__(self):
        super(Model, self).__init__()
    
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Performs matrix multiplication of A and B.

        Args:
            A: Input tensor with shape (M, K).
            B: Input tensor with shape (K, N).

        Returns:
            C: Output tensor with shape (M, N).
        """
        return torch.matmul(A, B)

M = 8205
K = 2949
N = 5921

def get_inputs():
    A = torch.rand(M, K)
    B = torch.rand(K, N)
    return [A, B]

def get_init_inputs():
    return []  # No special initialization inputs needed'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: K, the terms each output sums (aten mm, run on the meta device at 9 sizes)
# - value families: normal, uniform, small, negative, sorted_up, sorted_down, constant, ties,
#   denormal, neg_inf, specials; not wide (small: 537 of 11997 entries off, |err| 0.0023 > atol
#   6.5e-05 + rtol 1.3e-06*|ref|); large (small: 289 of 11997 entries off, |err| 1.09e+17 > atol
#   6.5e-05 + rtol 1.3e-06*|ref|); spike (small: 65 of 11997 entries off, |err| 0.00101 > atol
#   6.5e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset
# - probed at the CPU sizes and at reach:K=2949 (the longest reduction)
# - dims: M 1..8205, K 1..2949, N 1..5921 (the least and the blocks each takes, tried on the meta
#   device from the CPU size)
SPEC = {'inputs': [{'name': 'A', 'shape': ['M', 'K']}, {'name': 'B', 'shape': ['K', 'N']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem', 'dims': {'M': 8205, 'K': 2949, 'N': 5921}, 'interpreter': False},
           {'name': 'small', 'dims': {'M': 129, 'K': 93, 'N': 93}, 'interpreter': True},
           {'name': 'odd', 'dims': {'M': 131, 'K': 95, 'N': 97}, 'interpreter': True}],
 'bench': [{'name': 'problem', 'dims': {'M': 8205, 'K': 2949, 'N': 5921}, 'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/8_Matmul_with_irregular_shapes_.py',
            'sha256': '717f98e135d8c11b5005bd869b36843960de2c06151beb3d7dd6a760a987223c',
            'level': 1,
            'problem': 8,
            'title': 'Matmul_with_irregular_shapes_',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: M 8205 -> 129/131, K 2949 -> "
                      '93/95, N 5921 -> 93/97',
                      'domain: M, K, N drawn']},
 'reduction': 'K',
 'domain': {'dims': {'M': {'range': [1, 8205], 'cpu_max': 131},
                     'K': {'range': [1, 2949], 'cpu_max': 95},
                     'N': {'range': [1, 5921], 'cpu_max': 97}},
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
PLAN = {'constants': {'M': ['M', None], 'K': ['K', None], 'N': ['N', None]},
 'inputs': [{'name': 'A', 'draw': 'judge'}, {'name': 'B', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'M': 8205, 'K': 2949, 'N': 5921},
  'bytes': 360957516,
  'flops': 286535485890},
 {'size': 'small', 'dims': {'M': 129, 'K': 93, 'N': 93}, 'bytes': 130572, 'flops': 2231442},
 {'size': 'odd', 'dims': {'M': 131, 'K': 95, 'N': 97}, 'bytes': 137468, 'flops': 2414330}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb1_8_matmul_with_irregular_shapes', SOURCE, SPEC, PLAN, DERIVED)


def kb1_8_matmul_with_irregular_shapes(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(A, B)


def eager(A, B):
    return PROBLEM.eager(A, B)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
