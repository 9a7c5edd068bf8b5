"""kb1_3_batched_matrix_multiplication: KernelBench level 1, problem 3 (Batched_matrix_multiplication).

Imported by `kernelgen import kernelbench` from KernelBench/level1/3_Batched_matrix_multiplication.py.

At the problem's own size (batch_size=128, m=512, k=1024, n=2048):
- A: ['batch_size', 'm', 'k'] float32
- B: ['batch_size', 'k', 'n'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 128 -> 16/17, m 512 -> 16/19, k 1024 ->
  32/33, n 2048 -> 32/35
Note: domain: batch_size, m, k, n drawn

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
    Performs batched matrix multiplication (C = A * B) where A, B, and C have the same batch dimension.
    """
    def __init__(self):
        super(Model, self).__init__()
    
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """
        Performs batched matrix multiplication.

        Args:
            A: Input tensor of shape (batch_size, m, k).
            B: Input tensor of shape (batch_size, k, n).

        Returns:
            C: Output tensor of shape (batch_size, m, n).
        """
        return torch.bmm(A, B)

batch_size = 128
m = 128 * 4
k = 256 * 4
n = 512 * 4

def get_inputs():
    A = torch.rand(batch_size, m, k)
    B = torch.rand(batch_size, k, n)
    return [A, B]

def get_init_inputs():
    return []  # No special initialization inputs needed'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: k, the terms each output sums (aten bmm, run on the meta device at 10 sizes)
# - value families: normal, uniform, small, negative, sorted_up, sorted_down, constant, ties,
#   denormal, neg_inf, specials; not wide (small: 197 of 8192 entries off, |err| 0.00129 > atol
#   5e-05 + rtol 1.3e-06*|ref|); large (small: 88 of 8192 entries off, |err| 7.06e+15 > atol
#   5e-05 + rtol 1.3e-06*|ref|); spike (small: 27 of 8192 entries off, |err| 0.000438 > atol
#   5e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset, leading
# - probed at the CPU sizes and at reach:k=1024 (the longest reduction)
# - a leading view slices m (second to last in a rank-3+ input)
# - dims: batch_size 1..128, m 1..512, k 1..1024, n 1..2048 (the least and the blocks each takes,
#   tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'A', 'shape': ['batch_size', 'm', 'k']},
            {'name': 'B', 'shape': ['batch_size', 'k', 'n']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 128, 'm': 512, 'k': 1024, 'n': 2048},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 16, 'm': 16, 'k': 32, 'n': 32},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 17, 'm': 19, 'k': 33, 'n': 35},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 128, 'm': 512, 'k': 1024, 'n': 2048},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/3_Batched_matrix_multiplication.py',
            'sha256': '310fb3bdf4f69ea178a5b5868bf204e83196cba71e4750be3fbbcb68b78d37f7',
            'level': 1,
            'problem': 3,
            'title': 'Batched_matrix_multiplication',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 128 -> 16/17, m 512 -> "
                      '16/19, k 1024 -> 32/33, n 2048 -> 32/35',
                      'domain: batch_size, m, k, n drawn']},
 'reduction': 'k',
 'domain': {'dims': {'batch_size': {'range': [1, 128], 'cpu_max': 17},
                     'm': {'range': [1, 512], 'cpu_max': 19},
                     'k': {'range': [1, 1024], 'cpu_max': 33},
                     'n': {'range': [1, 2048], 'cpu_max': 35}},
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
            'heads': 'm'}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'm': ['m', None],
               'k': ['k', None],
               'n': ['n', None]},
 'inputs': [{'name': 'A', 'draw': 'judge'}, {'name': 'B', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 128, 'm': 512, 'k': 1024, 'n': 2048},
  'bytes': 1879048192,
  'flops': 274877906944},
 {'size': 'small',
  'dims': {'batch_size': 16, 'm': 16, 'k': 32, 'n': 32},
  'bytes': 131072,
  'flops': 524288},
 {'size': 'odd',
  'dims': {'batch_size': 17, 'm': 19, 'k': 33, 'n': 35},
  'bytes': 166396,
  'flops': 746130}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb1_3_batched_matrix_multiplication', SOURCE, SPEC, PLAN, DERIVED)


def kb1_3_batched_matrix_multiplication(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(A, B)


def eager(A, B):
    return PROBLEM.eager(A, B)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
