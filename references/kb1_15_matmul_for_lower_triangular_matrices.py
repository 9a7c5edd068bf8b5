"""kb1_15_matmul_for_lower_triangular_matrices: KernelBench level 1, problem 15 (Matmul_for_lower_triangular_matrices).

Imported by `kernelgen import kernelbench` from KernelBench/level1/15_Matmul_for_lower_triangular_matrices.py.

At the problem's own size (M=4096):
- A: ['M', 'M'] float32
- B: ['M', 'M'] float32
CPU sizes: small, odd.
Note: A: drawn by the problem's own get_inputs() (not a plain rand/randn)
Note: B: drawn by the problem's own get_inputs() (not a plain rand/randn)
Note: CPU sizes scale the module's constants: M 4096 -> 64/65
Note: domain: M drawn

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
    Simple model that performs a matrix multiplication (C = A * B) where A and B are lower triangular matrices. 
    """
    def __init__(self):
        super(Model, self).__init__()
    
    def forward(self, A, B):
        """
        Performs matrix multiplication of lower triangular matrices A and B.

        Args:
            A (torch.Tensor): Lower triangular matrix of shape (N, N).
            B (torch.Tensor): Lower triangular matrix of shape (N, N).

        Returns:
            torch.Tensor: The result of matrix multiplication C of shape (N, N).
        """
        return torch.tril(torch.matmul(A, B))

M = 4096

def get_inputs():
    A = torch.rand(M, M)
    B = torch.rand(M, M)
    A = torch.tril(A)
    B = torch.tril(B)
    return [A, B]

def get_init_inputs():
    return []  # No special initialization inputs needed'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: M, the terms each output sums (aten mm, run on the meta device at 7 sizes)
# - value families: no input takes the judge's values, the sizes' own
# - layouts: contiguous, strided, transposed, offset
# - dims: M 1..4096 (the least and the blocks each takes, tried on the meta device from the CPU
#   size)
SPEC = {'inputs': [{'name': 'A', 'shape': ['M', 'M']}, {'name': 'B', 'shape': ['M', 'M']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem', 'dims': {'M': 4096}, 'interpreter': False},
           {'name': 'small', 'dims': {'M': 64}, 'interpreter': True},
           {'name': 'odd', 'dims': {'M': 65}, 'interpreter': True}],
 'bench': [{'name': 'problem', 'dims': {'M': 4096}, 'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/15_Matmul_for_lower_triangular_matrices.py',
            'sha256': 'eb1491ef5450d332f680c390e23fb6bed47bb09702f0027168ce5b121b6077d3',
            'level': 1,
            'problem': 15,
            'title': 'Matmul_for_lower_triangular_matrices',
            'convolution': False,
            'cpu': True,
            'notes': ["A: drawn by the problem's own get_inputs() (not a plain rand/randn)",
                      "B: drawn by the problem's own get_inputs() (not a plain rand/randn)",
                      "CPU sizes scale the module's constants: M 4096 -> 64/65",
                      'domain: M drawn']},
 'reduction': 'M',
 'domain': {'dims': {'M': {'range': [1, 4096], 'cpu_max': 65}},
            'dtypes': ['float32'],
            'layouts': ['contiguous', 'strided', 'transposed', 'offset'],
            'dists': ['normal', 'uniform']}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'M': ['M', None]},
 'inputs': [{'name': 'A', 'draw': 'problem'}, {'name': 'B', 'draw': 'problem'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem', 'dims': {'M': 4096}, 'bytes': 201326592, 'flops': 137438953472},
 {'size': 'small', 'dims': {'M': 64}, 'bytes': 49152, 'flops': 524288},
 {'size': 'odd', 'dims': {'M': 65}, 'bytes': 50700, 'flops': 549250}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb1_15_matmul_for_lower_triangular_matrices', SOURCE, SPEC, PLAN, DERIVED)


def kb1_15_matmul_for_lower_triangular_matrices(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(A, B)


def eager(A, B):
    return PROBLEM.eager(A, B)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
