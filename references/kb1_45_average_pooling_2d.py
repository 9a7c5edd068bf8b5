"""kb1_45_average_pooling_2d: KernelBench level 1, problem 45 (Average_Pooling_2D).

Imported by `kernelgen import kernelbench` from KernelBench/level1/45_Average_Pooling_2D.py.

At the problem's own size (batch_size=16, channels=64, height=2048, width=2048, kernel_size=11,
  reduced=121):
- x: ['batch_size', 'channels', 'height', 'width'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 16 -> 8/9, channels 64 -> 8/13, height
  2048 -> 16/17, width 2048 -> 16/19
Note: domain: batch_size, channels, height, width drawn

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
    Simple model that performs 2D Average Pooling.
    """
    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0):
        """
        Initializes the Average Pooling layer.

        Args:
            kernel_size (int): Size of the pooling window.
            stride (int, optional): Stride of the pooling operation. Defaults to None (same as kernel_size).
            padding (int, optional): Padding applied to the input tensor. Defaults to 0.
        """
        super(Model, self).__init__()
        self.avg_pool = nn.AvgPool2d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies 2D Average Pooling to the input tensor.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, channels, height, width).

        Returns:
            torch.Tensor: Output tensor with Average Pooling applied.
        """
        return self.avg_pool(x)

batch_size = 16
channels = 64
height = 2048
width = 2048
kernel_size = 11

def get_inputs():
    x = torch.rand(batch_size, channels, height, width)
    return [x]

def get_init_inputs():
    return [kernel_size]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten avg_pool2d, run on the meta device at 10
#   sizes); for a drawn size, the largest of 121
# - value families: normal, uniform, wide, small, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials; not large (small: 3 of 64 entries off, |err|
#   5.21e+03 > atol 6.9e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset, leading
# - a leading view slices height (second to last in a rank-3+ input)
# - dims: batch_size 1..16, channels 1..64, height 11..2048, width 11..2048 (the least and the
#   blocks each takes, tried on the meta device from the CPU size); kept: kernel_size=11
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'channels', 'height', 'width']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 16,
                     'channels': 64,
                     'height': 2048,
                     'width': 2048,
                     'kernel_size': 11,
                     'reduced': 121},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 8,
                     'channels': 8,
                     'height': 16,
                     'width': 16,
                     'kernel_size': 11,
                     'reduced': 121},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 9,
                     'channels': 13,
                     'height': 17,
                     'width': 19,
                     'kernel_size': 11,
                     'reduced': 121},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 16,
                     'channels': 64,
                     'height': 2048,
                     'width': 2048,
                     'kernel_size': 11,
                     'reduced': 121},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/45_Average_Pooling_2D.py',
            'sha256': '3abae4a4776630cc55e066f3878c268e9338b4a936d50a38d8bd62d3bdefe1ba',
            'level': 1,
            'problem': 45,
            'title': 'Average_Pooling_2D',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 16 -> 8/9, channels 64 "
                      '-> 8/13, height 2048 -> 16/17, width 2048 -> 16/19',
                      'domain: batch_size, channels, height, width drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 16], 'cpu_max': 9},
                     'channels': {'range': [1, 64], 'cpu_max': 13},
                     'height': {'range': [11, 2048], 'cpu_max': 17},
                     'width': {'range': [11, 2048], 'cpu_max': 19}},
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
            'derived': ['reduced'],
            'heads': 'height'}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'channels': ['channels', None],
               'height': ['height', None],
               'width': ['width', None],
               'kernel_size': ['kernel_size', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 16,
           'channels': 64,
           'height': 2048,
           'width': 2048,
           'kernel_size': 11,
           'reduced': 121},
  'bytes': 17321574400,
  'flops': 0},
 {'size': 'small',
  'dims': {'batch_size': 8,
           'channels': 8,
           'height': 16,
           'width': 16,
           'kernel_size': 11,
           'reduced': 121},
  'bytes': 65792,
  'flops': 0},
 {'size': 'odd',
  'dims': {'batch_size': 9,
           'channels': 13,
           'height': 17,
           'width': 19,
           'kernel_size': 11,
           'reduced': 121},
  'bytes': 151632,
  'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'kernel_size': 11}, 'reduced': 'reduced', 'sites': [{'factor': 121.0}]}

PROBLEM = DrawnProblem('kb1_45_average_pooling_2d', SOURCE, SPEC, PLAN, DERIVED)


def kb1_45_average_pooling_2d(x: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(x)


def eager(x):
    return PROBLEM.eager(x)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
