"""kb1_90_cumprod: KernelBench level 1, problem 90 (cumprod).

Imported by `kernelgen import kernelbench` from KernelBench/level1/90_cumprod.py.

At the problem's own size (batch_size=32768, input_shape_0=32768, dim=1):
- x: ['batch_size', 'input_shape_0'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 32768 -> 128/129, input_shape_0 32768 ->
  128/131
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
    A model that performs a cumulative product operation along a specified dimension.

    Parameters:
        dim (int): The dimension along which to perform the cumulative product operation.
    """

    def __init__(self, dim):
        """
        Initialize the CumulativeProductModel.

        Args:
            dim (int): The dimension along which to perform the cumulative product.
        """
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x):
        """
        Forward pass, computing the cumulative product along the specified dimension.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, *input_shape).

        Returns:
            torch.Tensor: Tensor of the same shape as `x` after applying cumulative product along `dim`.
        """
        return torch.cumprod(x, dim=self.dim)

# Define input dimensions and parameters
batch_size = 32768
input_shape = (32768,)
dim = 1

def get_inputs():
    return [torch.rand(batch_size, *input_shape)]

def get_init_inputs():
    return [dim]
'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: input_shape_0, the terms each output sums (aten cumprod, run on the meta device at
#   8 sizes)
# - value families: normal, uniform, small, spike, ties, denormal, neg_inf, specials; not wide
#   (small: 12752 of 16384 entries off, |err| inf > atol 7e-05 + rtol 1.3e-06*|ref|); large
#   (small: 3830 of 16384 entries off, |err| inf > atol 7e-05 + rtol 1.3e-06*|ref|); negative
#   (small: 7244 of 16384 entries off, |err| inf > atol 7e-05 + rtol 1.3e-06*|ref|); sorted_up
#   (reach: 778 of 32768 entries off, |err| inf > atol 0.00015 + rtol 1.3e-06*|ref|); sorted_down
#   (reach: 768 of 32768 entries off, |err| inf > atol 0.00015 + rtol 1.3e-06*|ref|); constant
#   (small: 152 of 16384 entries off, |err| inf > atol 7e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset
# - probed at the CPU sizes and at reach:input_shape_0=32768 (the longest reduction)
# - dims: batch_size 1..32768, input_shape_0 1..32768 (the least and the blocks each takes, tried
#   on the meta device from the CPU size); kept: dim=1
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'input_shape_0']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 32768, 'input_shape_0': 32768, 'dim': 1},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 128, 'input_shape_0': 128, 'dim': 1},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 129, 'input_shape_0': 131, 'dim': 1},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 32768, 'input_shape_0': 32768, 'dim': 1},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/90_cumprod.py',
            'sha256': '17408793b4846d75bef22fff5c2a16c7d836409eabc0476c8060f75183a64665',
            'level': 1,
            'problem': 90,
            'title': 'cumprod',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 32768 -> 128/129, "
                      'input_shape_0 32768 -> 128/131',
                      'domain: batch_size, input_shape_0 drawn']},
 'reduction': 'input_shape_0',
 'domain': {'dims': {'batch_size': {'range': [1, 32768], 'cpu_max': 129},
                     'input_shape_0': {'range': [1, 32768], 'cpu_max': 131}},
            'dtypes': ['float32'],
            'layouts': ['contiguous', 'strided', 'transposed', 'offset'],
            'dists': ['normal',
                      'uniform',
                      'small',
                      'spike',
                      'ties',
                      'denormal',
                      'neg_inf',
                      'specials']}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'input_shape_0': ['input_shape', 0],
               'dim': ['dim', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 32768, 'input_shape_0': 32768, 'dim': 1},
  'bytes': 8589934592,
  'flops': 0},
 {'size': 'small',
  'dims': {'batch_size': 128, 'input_shape_0': 128, 'dim': 1},
  'bytes': 131072,
  'flops': 0},
 {'size': 'odd',
  'dims': {'batch_size': 129, 'input_shape_0': 131, 'dim': 1},
  'bytes': 135192,
  'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'dim': 1}}

PROBLEM = DrawnProblem('kb1_90_cumprod', SOURCE, SPEC, PLAN, DERIVED)


def kb1_90_cumprod(x: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(x)


def eager(x):
    return PROBLEM.eager(x)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
