"""kb1_10_3d_tensor_matrix_multiplication: KernelBench level 1, problem 10 (3D_tensor_matrix_multiplication).

Imported by `kernelgen import kernelbench` from KernelBench/level1/10_3D_tensor_matrix_multiplication.py.

At the problem's own size (N=16, M=1024, K=2048, L=768):
- A: ['N', 'M', 'K'] float32
- B: ['K', 'L'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: M 1024 -> 32/35, K 2048 -> 32/33, L 768 -> 24/25
Note: domain: N, M, K, L drawn

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
    Performs 3D tensor-matrix multiplication.
    """
    def __init__(self):
        super(Model, self).__init__()
    
    def forward(self, A, B):
        """
        Performs 3D tensor-matrix multiplication.

        Args:
            A (torch.Tensor): Input 3D tensor of shape (N, M, K).
            B (torch.Tensor): Input matrix of shape (K, L).

        Returns:
            torch.Tensor: Output tensor of shape (N, M, L), resulting from the multiplication of A and B along the last dimension of A.
        """
        return torch.matmul(A, B)

N = 16
M = 1024
K = 2048
L = 768

def get_inputs():
    A = torch.rand(N, M, K)
    B = torch.rand(K, L)
    return [A, B]

def get_init_inputs():
    return []  # No special initialization inputs needed'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: K, the terms each output sums (aten mm, run on the meta device at 10 sizes)
# - value families: normal, uniform, small, negative, sorted_up, sorted_down, constant, ties,
#   denormal, neg_inf, specials; not wide (small: 281 of 12288 entries off, |err| 0.00121 > atol
#   5e-05 + rtol 1.3e-06*|ref|); large (small: 120 of 12288 entries off, |err| 2.25e+16 > atol
#   5e-05 + rtol 1.3e-06*|ref|); spike (small: 45 of 12288 entries off, |err| 0.000877 > atol
#   5e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset, leading
# - probed at the CPU sizes and at reach:K=2048 (the longest reduction)
# - a leading view slices M (second to last in a rank-3+ input)
# - dims: N 1..16, M 1..1024, K 1..2048, L 1..768 (the least and the blocks each takes, tried on
#   the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'A', 'shape': ['N', 'M', 'K']}, {'name': 'B', 'shape': ['K', 'L']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'N': 16, 'M': 1024, 'K': 2048, 'L': 768},
            'interpreter': False},
           {'name': 'small', 'dims': {'N': 16, 'M': 32, 'K': 32, 'L': 24}, 'interpreter': True},
           {'name': 'odd', 'dims': {'N': 16, 'M': 35, 'K': 33, 'L': 25}, 'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'N': 16, 'M': 1024, 'K': 2048, 'L': 768},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/10_3D_tensor_matrix_multiplication.py',
            'sha256': 'bd4013a4d5563e3a0a7da6c055dd9c83fbedb5fdd2842e8610a84a510f75e0af',
            'level': 1,
            'problem': 10,
            'title': '3D_tensor_matrix_multiplication',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: M 1024 -> 32/35, K 2048 -> 32/33, "
                      'L 768 -> 24/25',
                      'domain: N, M, K, L drawn']},
 'reduction': 'K',
 'domain': {'dims': {'N': {'range': [1, 16]},
                     'M': {'range': [1, 1024], 'cpu_max': 35},
                     'K': {'range': [1, 2048], 'cpu_max': 33},
                     'L': {'range': [1, 768], 'cpu_max': 25}},
            'dtypes': ['float32'],
            'layouts': ['contiguous', 'strided', 'transposed', 'offset', 'leading'],
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
                      'specials'],
            'heads': 'M'}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'N': ['N', None], 'M': ['M', None], 'K': ['K', None], 'L': ['L', None]},
 'inputs': [{'name': 'A', 'draw': 'judge'}, {'name': 'B', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'N': 16, 'M': 1024, 'K': 2048, 'L': 768},
  'bytes': 190840832,
  'flops': 51539607552},
 {'size': 'small', 'dims': {'N': 16, 'M': 32, 'K': 32, 'L': 24}, 'bytes': 117760, 'flops': 786432},
 {'size': 'odd', 'dims': {'N': 16, 'M': 35, 'K': 33, 'L': 25}, 'bytes': 133220, 'flops': 924000}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb1_10_3d_tensor_matrix_multiplication', SOURCE, SPEC, PLAN, DERIVED)


def kb1_10_3d_tensor_matrix_multiplication(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(A, B)


def eager(A, B):
    return PROBLEM.eager(A, B)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
