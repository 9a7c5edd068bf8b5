"""kb1_12_matmul_with_diagonal_matrices: KernelBench level 1, problem 12 (Matmul_with_diagonal_matrices_).

Imported by `kernelgen import kernelbench` from KernelBench/level1/12_Matmul_with_diagonal_matrices_.py.

At the problem's own size (M=4096, N=4096):
- A: ['N'] float32
- B: ['N', 'M'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: M 4096 -> 64/65, N 4096 -> 128/129
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
    Simple model that performs a matrix multiplication of a diagonal matrix with another matrix.
    C = diag(A) * B
    """
    def __init__(self):
        super(Model, self).__init__()
    
    def forward(self, A, B):
        """
        Performs the matrix multiplication.

        Args:
            A (torch.Tensor): A 1D tensor representing the diagonal of the diagonal matrix. Shape: (N,).
            B (torch.Tensor): A 2D tensor representing the second matrix. Shape: (N, M).

        Returns:
            torch.Tensor: The result of the matrix multiplication. Shape: (N, M).
        """
        # Logically equivalent to torch.diag(A) @ B 
        # more efficient as no need to materialize a full N×N matrix
        return A.unsqueeze(1) * B

M = 4096
N = 4096

def get_inputs():
    A = torch.rand(N)
    B = torch.rand(N, M)
    return [A, B]

def get_init_inputs():
    return []  # No special initialization inputs needed'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset
# - dims: M 1..4096, N 1..4096 (the least and the blocks each takes, tried on the meta device
#   from the CPU size)
SPEC = {'inputs': [{'name': 'A', 'shape': ['N']}, {'name': 'B', 'shape': ['N', 'M']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem', 'dims': {'M': 4096, 'N': 4096}, 'interpreter': False},
           {'name': 'small', 'dims': {'M': 64, 'N': 128}, 'interpreter': True},
           {'name': 'odd', 'dims': {'M': 65, 'N': 129}, 'interpreter': True}],
 'bench': [{'name': 'problem', 'dims': {'M': 4096, 'N': 4096}, 'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/12_Matmul_with_diagonal_matrices_.py',
            'sha256': '868bc16b165dd00232690d06ff7f50578ee64769b16b9c53b7069b2df1b36cf3',
            'level': 1,
            'problem': 12,
            'title': 'Matmul_with_diagonal_matrices_',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: M 4096 -> 64/65, N 4096 -> 128/129",
                      'domain: M, N drawn']},
 'domain': {'dims': {'M': {'range': [1, 4096], 'cpu_max': 65},
                     'N': {'range': [1, 4096], 'cpu_max': 129}},
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
 'inputs': [{'name': 'A', 'draw': 'judge'}, {'name': 'B', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem', 'dims': {'M': 4096, 'N': 4096}, 'bytes': 134234112, 'flops': 0},
 {'size': 'small', 'dims': {'M': 64, 'N': 128}, 'bytes': 66048, 'flops': 0},
 {'size': 'odd', 'dims': {'M': 65, 'N': 129}, 'bytes': 67596, 'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb1_12_matmul_with_diagonal_matrices', SOURCE, SPEC, PLAN, DERIVED)


def kb1_12_matmul_with_diagonal_matrices(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(A, B)


def eager(A, B):
    return PROBLEM.eager(A, B)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
