"""kb1_46_average_pooling_3d: KernelBench level 1, problem 46 (Average_Pooling_3D).

Imported by `kernelgen import kernelbench` from KernelBench/level1/46_Average_Pooling_3D.py.

At the problem's own size (batch_size=16, channels=32, depth=128, height=128, width=256,
  kernel_size=3, stride=2, padding=1, reduced=27):
- x: ['batch_size', 'channels', 'depth', 'height', 'width'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 16 -> 4/5, channels 32 -> 8/9, depth 128
  -> 8/11, height 128 -> 8/13, width 256 -> 8/8
Note: domain: batch_size, channels, depth, height, width drawn

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
    Simple model that performs 3D Average Pooling.
    """
    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0):
        """
        Initializes the Average Pooling layer.

        Args:
            kernel_size (int): Size of the kernel to apply pooling.
            stride (int, optional): Stride of the pooling operation. Defaults to None, which uses the kernel size.
            padding (int, optional): Padding to apply before pooling. Defaults to 0.
        """
        super(Model, self).__init__()
        self.avg_pool = nn.AvgPool3d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies Average Pooling to the input tensor.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, channels, depth, height, width).

        Returns:
            torch.Tensor: Output tensor with Average Pooling applied, shape depends on kernel_size, stride and padding.
        """
        return self.avg_pool(x)

batch_size = 16
channels = 32
depth = 128
height = 128
width = 256
kernel_size = 3
stride = 2
padding = 1

def get_inputs():
    x = torch.rand(batch_size, channels, depth, height, width)
    return [x]

def get_init_inputs():
    return [kernel_size, stride, padding]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten avg_pool3d, run on the meta device at 11
#   sizes); for a drawn size, the largest of 27
# - value families: normal, uniform, wide, small, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials; not large (small: 41 of 2048 entries off, |err|
#   1.21e+03 > atol 4.8e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset, leading
# - a leading view slices height (second to last in a rank-3+ input)
# - dims: batch_size 1..16, channels 1..32, depth 3..128, height 3..128, width 3..256 (the least
#   and the blocks each takes, tried on the meta device from the CPU size); kept: kernel_size=3,
#   stride=2, padding=1
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'channels', 'depth', 'height', 'width']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 16,
                     'channels': 32,
                     'depth': 128,
                     'height': 128,
                     'width': 256,
                     'kernel_size': 3,
                     'stride': 2,
                     'padding': 1,
                     'reduced': 27},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 4,
                     'channels': 8,
                     'depth': 8,
                     'height': 8,
                     'width': 8,
                     'kernel_size': 3,
                     'stride': 2,
                     'padding': 1,
                     'reduced': 27},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 5,
                     'channels': 9,
                     'depth': 11,
                     'height': 13,
                     'width': 8,
                     'kernel_size': 3,
                     'stride': 2,
                     'padding': 1,
                     'reduced': 27},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 16,
                     'channels': 32,
                     'depth': 128,
                     'height': 128,
                     'width': 256,
                     'kernel_size': 3,
                     'stride': 2,
                     'padding': 1,
                     'reduced': 27},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/46_Average_Pooling_3D.py',
            'sha256': 'bb683a01c421e1e289b7cd765a7c199317984f4fccad885e69acf32fa97ce3d3',
            'level': 1,
            'problem': 46,
            'title': 'Average_Pooling_3D',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 16 -> 4/5, channels 32 "
                      '-> 8/9, depth 128 -> 8/11, height 128 -> 8/13, width 256 -> 8/8',
                      'domain: batch_size, channels, depth, height, width drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 16], 'cpu_max': 5},
                     'channels': {'range': [1, 32], 'cpu_max': 9},
                     'depth': {'range': [3, 128], 'cpu_max': 11},
                     'height': {'range': [3, 128], 'cpu_max': 13},
                     'width': {'range': [3, 256], 'cpu_max': 8}},
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
               'depth': ['depth', None],
               'height': ['height', None],
               'width': ['width', None],
               'kernel_size': ['kernel_size', None],
               'stride': ['stride', None],
               'padding': ['padding', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 16,
           'channels': 32,
           'depth': 128,
           'height': 128,
           'width': 256,
           'kernel_size': 3,
           'stride': 2,
           'padding': 1,
           'reduced': 27},
  'bytes': 9663676416,
  'flops': 0},
 {'size': 'small',
  'dims': {'batch_size': 4,
           'channels': 8,
           'depth': 8,
           'height': 8,
           'width': 8,
           'kernel_size': 3,
           'stride': 2,
           'padding': 1,
           'reduced': 27},
  'bytes': 73728,
  'flops': 0},
 {'size': 'odd',
  'dims': {'batch_size': 5,
           'channels': 9,
           'depth': 11,
           'height': 13,
           'width': 8,
           'kernel_size': 3,
           'stride': 2,
           'padding': 1,
           'reduced': 27},
  'bytes': 236160,
  'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'kernel_size': 3, 'stride': 2, 'padding': 1},
 'reduced': 'reduced',
 'sites': [{'factor': 27.0}]}

PROBLEM = DrawnProblem('kb1_46_average_pooling_3d', SOURCE, SPEC, PLAN, DERIVED)


def kb1_46_average_pooling_3d(x: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(x)


def eager(x):
    return PROBLEM.eager(x)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
