"""kb1_5_matrix_scalar_multiplication: KernelBench level 1, problem 5 (Matrix_scalar_multiplication).

Imported by `kernelgen import kernelbench` from KernelBench/level1/5_Matrix_scalar_multiplication.py.

At the problem's own size (M=65536, N=16384):
- A: ['M', 'N'] float32
- s = 3.14
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: M 65536 -> 128/129, N 16384 -> 128/131
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
    Simple model that performs a matrix-scalar multiplication (C = A * s)
    """
    def __init__(self):
        super(Model, self).__init__()
    
    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        """
        Performs matrix-scalar multiplication.

        Args:
            A: Input matrix of shape (M, N)
            s: Scalar value

        Returns:
            C: Resulting matrix of shape (M, N)
        """
        return A * s

M = 16384 * 4
N = 4096 * 4

def get_inputs():
    A = torch.rand(M, N)
    s = 3.14
    return [A, s]

def get_init_inputs():
    return []  # No special initialization inputs needed'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset
# - dims: M 1..65536, N 1..16384 (the least and the blocks each takes, tried on the meta device
#   from the CPU size)
SPEC = {'inputs': [{'name': 'A', 'shape': ['M', 'N']}, {'kind': 'scalar', 'name': 's', 'value': 3.14}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem', 'dims': {'M': 65536, 'N': 16384}, 'interpreter': False},
           {'name': 'small', 'dims': {'M': 128, 'N': 128}, 'interpreter': True},
           {'name': 'odd', 'dims': {'M': 129, 'N': 131}, 'interpreter': True}],
 'bench': [{'name': 'problem', 'dims': {'M': 65536, 'N': 16384}, 'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/5_Matrix_scalar_multiplication.py',
            'sha256': 'f4d52425a8f72b4b22375494064f2ab1675e2caf29376c47a102211ce66d6987',
            'level': 1,
            'problem': 5,
            'title': 'Matrix_scalar_multiplication',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: M 65536 -> 128/129, N 16384 -> "
                      '128/131',
                      'domain: M, N drawn']},
 'domain': {'dims': {'M': {'range': [1, 65536], 'cpu_max': 129},
                     'N': {'range': [1, 16384], 'cpu_max': 131}},
            'dtypes': ['float32'],
            'layouts': ['contiguous', 'strided', 'transposed', 'offset'],
            'dists': ['normal',
                      'uniform',
                      'wide',
                      'small',
                      'large',
                      'spike',
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
 'inputs': [{'name': 'A', 'draw': 'judge'}, {'name': 's', 'draw': 'scalar'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem', 'dims': {'M': 65536, 'N': 16384}, 'bytes': 8589934592, 'flops': 0},
 {'size': 'small', 'dims': {'M': 128, 'N': 128}, 'bytes': 131072, 'flops': 0},
 {'size': 'odd', 'dims': {'M': 129, 'N': 131}, 'bytes': 135192, 'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb1_5_matrix_scalar_multiplication', SOURCE, SPEC, PLAN, DERIVED)


def kb1_5_matrix_scalar_multiplication(A: torch.Tensor, s: float) -> torch.Tensor:
    return PROBLEM.forward(A, s)


def eager(A, s):
    return PROBLEM.eager(A, s)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
