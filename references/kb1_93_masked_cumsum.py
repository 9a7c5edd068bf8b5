"""kb1_93_masked_cumsum: KernelBench level 1, problem 93 (masked_cumsum).

Imported by `kernelgen import kernelbench` from KernelBench/level1/93_masked_cumsum.py.

At the problem's own size (batch_size=32768, input_shape_0=32768, dim=1):
- x: ['batch_size', 'input_shape_0'] float32
- mask: ['batch_size', 'input_shape_0'] bool
CPU sizes: small, odd.
Note: mask: drawn by the problem's own get_inputs() (integer values)
Note: CPU sizes scale the module's constants: batch_size 32768 -> 64/65, input_shape_0 32768 ->
  128/129
Note: domain: batch_size, input_shape_0 drawn

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
    A model that performs a masked cumulative sum, only summing elements that satisfy a condition.

    Parameters:
        dim (int): The dimension along which to perform the masked cumulative sum.
    """

    def __init__(self, dim):
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x, mask):
        """
        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, *input_shape).
            mask (torch.Tensor): Boolean mask of the same shape as x.

        Returns:
            torch.Tensor: Cumulative sum of elements where mask is True.
        """
        return torch.cumsum(x * mask, dim=self.dim)

batch_size = 32768
input_shape = (32768,)
dim = 1

def get_inputs():
    x = torch.rand(batch_size, *input_shape)
    mask = torch.randint(0, 2, x.shape).bool()  # Random boolean mask
    return [x, mask]

def get_init_inputs():
    return [dim]
'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: input_shape_0, the terms each output sums (aten cumsum, run on the meta device at
#   8 sizes)
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset
# - probed at the CPU sizes and at reach:input_shape_0=32768 (the longest reduction)
# - dims: batch_size 1..32768, input_shape_0 1..32768 (the least and the blocks each takes, tried
#   on the meta device from the CPU size); kept: dim=1
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'input_shape_0']},
            {'name': 'mask',
             'shape': ['batch_size', 'input_shape_0'],
             'dtype': 'bool',
             'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 32768, 'input_shape_0': 32768, 'dim': 1},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64, 'input_shape_0': 128, 'dim': 1},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65, 'input_shape_0': 129, 'dim': 1},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 32768, 'input_shape_0': 32768, 'dim': 1},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/93_masked_cumsum.py',
            'sha256': '8b1591c5c8242968acc0677a4a1308b7a704534724782c3858b4cb0b10828769',
            'level': 1,
            'problem': 93,
            'title': 'masked_cumsum',
            'convolution': False,
            'cpu': True,
            'notes': ["mask: drawn by the problem's own get_inputs() (integer values)",
                      "CPU sizes scale the module's constants: batch_size 32768 -> 64/65, "
                      'input_shape_0 32768 -> 128/129',
                      'domain: batch_size, input_shape_0 drawn']},
 'reduction': 'input_shape_0',
 'domain': {'dims': {'batch_size': {'range': [1, 32768], 'cpu_max': 65},
                     'input_shape_0': {'range': [1, 32768], 'cpu_max': 129}},
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
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'input_shape_0': ['input_shape', 0],
               'dim': ['dim', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}, {'name': 'mask', 'draw': 'problem'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 32768, 'input_shape_0': 32768, 'dim': 1},
  'bytes': 9663676416,
  'flops': 0},
 {'size': 'small',
  'dims': {'batch_size': 64, 'input_shape_0': 128, 'dim': 1},
  'bytes': 73728,
  'flops': 0},
 {'size': 'odd',
  'dims': {'batch_size': 65, 'input_shape_0': 129, 'dim': 1},
  'bytes': 75465,
  'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'dim': 1}}

PROBLEM = DrawnProblem('kb1_93_masked_cumsum', SOURCE, SPEC, PLAN, DERIVED)


def kb1_93_masked_cumsum(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(x, mask)


def eager(x, mask):
    return PROBLEM.eager(x, mask)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
