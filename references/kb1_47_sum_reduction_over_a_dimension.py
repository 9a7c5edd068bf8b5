"""kb1_47_sum_reduction_over_a_dimension: KernelBench level 1, problem 47 (Sum_reduction_over_a_dimension).

Imported by `kernelgen import kernelbench` from KernelBench/level1/47_Sum_reduction_over_a_dimension.py.

At the problem's own size (batch_size=128, dim1=4096, dim2=4095, reduce_dim=1):
- x: ['batch_size', 'dim1', 'dim2'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 128 -> 16/17, dim1 4096 -> 32/33, dim2
  4095 -> 32/35
Note: domain: batch_size, dim1, dim2 drawn

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
    Simple model that performs sum reduction over a specified dimension.
    """
    def __init__(self, dim: int):
        """
        Initializes the model with the dimension to reduce over.

        Args:
            dim (int): Dimension to reduce over.
        """
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies sum reduction over the specified dimension.

        Args:
            x (torch.Tensor): Input tensor of shape (..., dim, ...).

        Returns:
            torch.Tensor: Output tensor after sum reduction, shape (..., 1, ...).
        """
        return torch.sum(x, dim=self.dim, keepdim=True)

batch_size = 128
dim1 = 4096
dim2 = 4095
reduce_dim = 1

def get_inputs():
    x = torch.rand(batch_size, dim1, dim2)
    return [x]

def get_init_inputs():
    return [reduce_dim]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: dim1, the terms each output sums (aten sum, run on the meta device at 9 sizes)
# - value families: normal, uniform, wide, small, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials; not large (small: 9 of 512 entries off, |err|
#   2.27e+05 > atol 5e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset, leading
# - probed at the CPU sizes and at reach:dim1=4096 (the longest reduction)
# - a leading view slices dim1 (second to last in a rank-3+ input)
# - dims: batch_size 1..128, dim1 1..4096, dim2 1..4095 (the least and the blocks each takes,
#   tried on the meta device from the CPU size); kept: reduce_dim=1
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'dim1', 'dim2']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 128, 'dim1': 4096, 'dim2': 4095, 'reduce_dim': 1},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 16, 'dim1': 32, 'dim2': 32, 'reduce_dim': 1},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 17, 'dim1': 33, 'dim2': 35, 'reduce_dim': 1},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 128, 'dim1': 4096, 'dim2': 4095, 'reduce_dim': 1},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/47_Sum_reduction_over_a_dimension.py',
            'sha256': '537d2ff381740bdb54b5208f82187564f6733a30df918edbbf7a49d64bef17ab',
            'level': 1,
            'problem': 47,
            'title': 'Sum_reduction_over_a_dimension',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 128 -> 16/17, dim1 4096 "
                      '-> 32/33, dim2 4095 -> 32/35',
                      'domain: batch_size, dim1, dim2 drawn']},
 'reduction': 'dim1',
 'domain': {'dims': {'batch_size': {'range': [1, 128], 'cpu_max': 17},
                     'dim1': {'range': [1, 4096], 'cpu_max': 33},
                     'dim2': {'range': [1, 4095], 'cpu_max': 35}},
            'dtypes': ['float32'],
            'layouts': ['contiguous', 'strided', 'transposed', 'offset', 'leading'],
            'dists': ['normal',
                      'uniform',
                      'wide',
                      'small',
                      'spike',
                      'negative',
                      'sorted_up',
                      'sorted_down',
                      'constant',
                      'ties',
                      'denormal',
                      'neg_inf',
                      'specials'],
            'heads': 'dim1'}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'dim1': ['dim1', None],
               'dim2': ['dim2', None],
               'reduce_dim': ['reduce_dim', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 128, 'dim1': 4096, 'dim2': 4095, 'reduce_dim': 1},
  'bytes': 8589934080,
  'flops': 0},
 {'size': 'small',
  'dims': {'batch_size': 16, 'dim1': 32, 'dim2': 32, 'reduce_dim': 1},
  'bytes': 67584,
  'flops': 0},
 {'size': 'odd',
  'dims': {'batch_size': 17, 'dim1': 33, 'dim2': 35, 'reduce_dim': 1},
  'bytes': 80920,
  'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'reduce_dim': 1}}

PROBLEM = DrawnProblem('kb1_47_sum_reduction_over_a_dimension', SOURCE, SPEC, PLAN, DERIVED)


def kb1_47_sum_reduction_over_a_dimension(x: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(x)


def eager(x):
    return PROBLEM.eager(x)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
