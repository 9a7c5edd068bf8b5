"""kb1_9_tall_skinny_matrix_multiplication: KernelBench level 1, problem 9 (Tall_skinny_matrix_multiplication_).

Imported by `kernelgen import kernelbench` from KernelBench/level1/9_Tall_skinny_matrix_multiplication_.py.

At the problem's own size (M=32768, N=32):
- A: ['M', 'N'] float32
- B: ['N', 'M'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: M 32768 -> 128/129
Note: domain: M, N drawn

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
    Simple model that performs a single matrix multiplication (C = A * B) where one of the matrices is tall and skinny (M >> N or N >> M)
    """
    def __init__(self):
        super(Model, self).__init__()
    
    def forward(self, A, B):
        """
        Performs the matrix multiplication.

        Args:
            A (torch.Tensor): Input matrix of shape (M, K) or (K, M) where M >> N or N >> M.
            B (torch.Tensor): Input matrix of shape (K, N) or (N, K) where M >> N or N >> M.

        Returns:
            torch.Tensor: Output matrix of shape (M, N) or (N, M)
        """
        return torch.matmul(A, B)

M = 16384 * 2
N = 16 * 2

def get_inputs():
    A = torch.rand(M, N)
    B = torch.rand(N, M)
    return [A, B]

def get_init_inputs():
    return []  # No special initialization inputs needed'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: N, the terms each output sums (aten mm, run on the meta device at 8 sizes)
# - value families: normal, uniform, small, negative, sorted_up, sorted_down, constant, ties,
#   denormal, neg_inf, specials; not wide (small: 346 of 16384 entries off, |err| 0.00119 > atol
#   5e-05 + rtol 1.3e-06*|ref|); large (small: 158 of 16384 entries off, |err| 8.85e+14 > atol
#   5e-05 + rtol 1.3e-06*|ref|); spike (small: 26 of 16384 entries off, |err| 0.00051 > atol
#   5e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset
# - probed at the CPU sizes and at reach:N=32 (the longest reduction)
# - dims: M 1..32768, N 1..32 (the least and the blocks each takes, tried on the meta device from
#   the CPU size)
SPEC = {'inputs': [{'name': 'A', 'shape': ['M', 'N']}, {'name': 'B', 'shape': ['N', 'M']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem', 'dims': {'M': 32768, 'N': 32}, 'interpreter': False},
           {'name': 'small', 'dims': {'M': 128, 'N': 32}, 'interpreter': True},
           {'name': 'odd', 'dims': {'M': 129, 'N': 32}, 'interpreter': True}],
 'bench': [{'name': 'problem', 'dims': {'M': 32768, 'N': 32}, 'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/9_Tall_skinny_matrix_multiplication_.py',
            'sha256': '06a133f60f0d704b70014b210031e3937d7a183c90ea11800357ce6b55c89c18',
            'level': 1,
            'problem': 9,
            'title': 'Tall_skinny_matrix_multiplication_',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: M 32768 -> 128/129",
                      'domain: M, N drawn']},
 'reduction': 'N',
 'domain': {'dims': {'M': {'range': [1, 32768], 'cpu_max': 129}, 'N': {'range': [1, 32]}},
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
PLAN = {'constants': {'M': ['M', None], 'N': ['N', None]},
 'inputs': [{'name': 'A', 'draw': 'judge'}, {'name': 'B', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem', 'dims': {'M': 32768, 'N': 32}, 'bytes': 4303355904, 'flops': 68719476736},
 {'size': 'small', 'dims': {'M': 128, 'N': 32}, 'bytes': 98304, 'flops': 1048576},
 {'size': 'odd', 'dims': {'M': 129, 'N': 32}, 'bytes': 99588, 'flops': 1065024}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb1_9_tall_skinny_matrix_multiplication', SOURCE, SPEC, PLAN, DERIVED)


def kb1_9_tall_skinny_matrix_multiplication(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(A, B)


def eager(A, B):
    return PROBLEM.eager(A, B)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
