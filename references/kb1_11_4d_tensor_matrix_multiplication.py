"""kb1_11_4d_tensor_matrix_multiplication: KernelBench level 1, problem 11 (4D_tensor_matrix_multiplication).

Imported by `kernelgen import kernelbench` from KernelBench/level1/11_4D_tensor_matrix_multiplication.py.

At the problem's own size (b=8, i=256, j=512, l=256, k=768):
- A: ['b', 'i', 'j', 'l'] float32
- B: ['l', 'k'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: i 256 -> 8/9, j 512 -> 16/17, l 256 -> 16/19, k 768
  -> 12/13
Note: domain: b, i, j, l, k drawn

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
    Performs 4D tensor-matrix multiplication: 
        C[b, i, j, k] = sum_l A[b, i, j, l] * B[l, k]

    Args:
        A (torch.Tensor): Input 4D tensor of shape (b, i, j, l)
        B (torch.Tensor): Input matrix of shape (l, k)

    Returns:
        torch.Tensor: Output 4D tensor of shape (b, i, j, k)
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A, B):
        """
        Performs the 4D tensor-matrix multiplication.

        Args:
            A (torch.Tensor): Input 4D tensor of shape (b, i, j, l)
            B (torch.Tensor): Input matrix of shape (l, k)

        Returns:
            torch.Tensor: Output 4D tensor of shape (b, i, j, k)
        """
        return torch.einsum("bijl,lk->bijk", A, B)

# Test code
b = 8
i = 256
j = 512
l = 256
k = 768

def get_inputs():
    A = torch.rand(b, i, j, l)
    B = torch.rand(l, k)
    return [A, B]

def get_init_inputs():
    return []  # No special initialization inputs needed'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: l, the terms each output sums (aten bmm, run on the meta device at 11 sizes)
# - value families: normal, uniform, small, negative, sorted_up, sorted_down, constant, ties,
#   denormal, neg_inf, specials; not wide (small: 211 of 12288 entries off, |err| 0.00083 > atol
#   4e-05 + rtol 1.3e-06*|ref|); large (small: 65 of 12288 entries off, |err| 3.64e+14 > atol
#   4e-05 + rtol 1.3e-06*|ref|); spike (small: 37 of 12288 entries off, |err| 0.000338 > atol
#   4e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset, leading
# - probed at the CPU sizes and at reach:l=256 (the longest reduction)
# - a leading view slices j (second to last in a rank-3+ input)
# - dims: b 1..8, i 1..256, j 1..512, l 1..256, k 1..768 (the least and the blocks each takes,
#   tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'A', 'shape': ['b', 'i', 'j', 'l']}, {'name': 'B', 'shape': ['l', 'k']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'b': 8, 'i': 256, 'j': 512, 'l': 256, 'k': 768},
            'interpreter': False},
           {'name': 'small',
            'dims': {'b': 8, 'i': 8, 'j': 16, 'l': 16, 'k': 12},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'b': 8, 'i': 9, 'j': 17, 'l': 19, 'k': 13},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'b': 8, 'i': 256, 'j': 512, 'l': 256, 'k': 768},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/11_4D_tensor_matrix_multiplication.py',
            'sha256': 'f4e0b2e7721b68c8cf3d7109ae24690b0761eb01c79601f4330bbeffe8471bc8',
            'level': 1,
            'problem': 11,
            'title': '4D_tensor_matrix_multiplication',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: i 256 -> 8/9, j 512 -> 16/17, l "
                      '256 -> 16/19, k 768 -> 12/13',
                      'domain: b, i, j, l, k drawn']},
 'reduction': 'l',
 'domain': {'dims': {'b': {'range': [1, 8]},
                     'i': {'range': [1, 256], 'cpu_max': 9},
                     'j': {'range': [1, 512], 'cpu_max': 17},
                     'l': {'range': [1, 256], 'cpu_max': 19},
                     'k': {'range': [1, 768], 'cpu_max': 13}},
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
            'heads': 'j'}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'b': ['b', None],
               'i': ['i', None],
               'j': ['j', None],
               'l': ['l', None],
               'k': ['k', None]},
 'inputs': [{'name': 'A', 'draw': 'judge'}, {'name': 'B', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'b': 8, 'i': 256, 'j': 512, 'l': 256, 'k': 768},
  'bytes': 4295753728,
  'flops': 412316860416},
 {'size': 'small',
  'dims': {'b': 8, 'i': 8, 'j': 16, 'l': 16, 'k': 12},
  'bytes': 115456,
  'flops': 393216},
 {'size': 'odd',
  'dims': {'b': 8, 'i': 9, 'j': 17, 'l': 19, 'k': 13},
  'bytes': 157660,
  'flops': 604656}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb1_11_4d_tensor_matrix_multiplication', SOURCE, SPEC, PLAN, DERIVED)


def kb1_11_4d_tensor_matrix_multiplication(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(A, B)


def eager(A, B):
    return PROBLEM.eager(A, B)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
