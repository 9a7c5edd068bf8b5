"""kb1_1_square_matrix_multiplication: KernelBench level 1, problem 1 (Square_matrix_multiplication_).

Imported by `kernelgen import kernelbench` from KernelBench/level1/1_Square_matrix_multiplication_.py.

At the problem's own size (N=4096):
- A: ['N', 'N'] float32
- B: ['N', 'N'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: N 4096 -> 64/65
Note: domain: N drawn

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
    Simple model that performs a single square matrix multiplication (C = A * B)
    """
    def __init__(self):
        super(Model, self).__init__()
    
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Performs the matrix multiplication.

        Args:
            A (torch.Tensor): Input matrix A of shape (N, N).
            B (torch.Tensor): Input matrix B of shape (N, N).

        Returns:
            torch.Tensor: Output matrix C of shape (N, N).
        """
        return torch.matmul(A, B)

N = 2048 * 2

def get_inputs():
    A = torch.rand(N, N)
    B = torch.rand(N, N)
    return [A, B]

def get_init_inputs():
    return []  # No special initialization inputs needed'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: N, the terms each output sums (aten mm, run on the meta device at 7 sizes)
# - value families: normal, uniform, small, negative, sorted_up, sorted_down, constant, ties,
#   denormal, neg_inf, specials; not wide (small: 143 of 4096 entries off, |err| 0.00273 > atol
#   6e-05 + rtol 1.3e-06*|ref|); large (small: 80 of 4096 entries off, |err| 2.51e+16 > atol
#   6e-05 + rtol 1.3e-06*|ref|); spike (small: 26 of 4096 entries off, |err| 0.00084 > atol 6e-05
#   + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset
# - dims: N 1..4096 (the least and the blocks each takes, tried on the meta device from the CPU
#   size)
SPEC = {'inputs': [{'name': 'A', 'shape': ['N', 'N']}, {'name': 'B', 'shape': ['N', 'N']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem', 'dims': {'N': 4096}, 'interpreter': False},
           {'name': 'small', 'dims': {'N': 64}, 'interpreter': True},
           {'name': 'odd', 'dims': {'N': 65}, 'interpreter': True}],
 'bench': [{'name': 'problem', 'dims': {'N': 4096}, 'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/1_Square_matrix_multiplication_.py',
            'sha256': '7626d611b8f2c97a71ae40d731da8cb7ba067dc43cc2f3e8185ad85c68533f30',
            'level': 1,
            'problem': 1,
            'title': 'Square_matrix_multiplication_',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: N 4096 -> 64/65",
                      'domain: N drawn']},
 'reduction': 'N',
 'domain': {'dims': {'N': {'range': [1, 4096], 'cpu_max': 65}},
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
PLAN = {'constants': {'N': ['N', None]},
 'inputs': [{'name': 'A', 'draw': 'judge'}, {'name': 'B', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem', 'dims': {'N': 4096}, 'bytes': 201326592, 'flops': 137438953472},
 {'size': 'small', 'dims': {'N': 64}, 'bytes': 49152, 'flops': 524288},
 {'size': 'odd', 'dims': {'N': 65}, 'bytes': 50700, 'flops': 549250}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb1_1_square_matrix_multiplication', SOURCE, SPEC, PLAN, DERIVED)


def kb1_1_square_matrix_multiplication(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(A, B)


def eager(A, B):
    return PROBLEM.eager(A, B)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
