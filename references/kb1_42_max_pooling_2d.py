"""kb1_42_max_pooling_2d: KernelBench level 1, problem 42 (Max_Pooling_2D).

Imported by `kernelgen import kernelbench` from KernelBench/level1/42_Max_Pooling_2D.py.

At the problem's own size (batch_size=32, channels=64, height=512, width=512, kernel_size=4,
  stride=1, padding=1, dilation=1):
- x: ['batch_size', 'channels', 'height', 'width'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 32 -> 8/9, channels 64 -> 8/11, height 512
  -> 16/17, width 512 -> 16/19
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
    Simple model that performs Max Pooling 2D.
    """
    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        """
        Initializes the Max Pooling 2D layer.

        Args:
            kernel_size (int): Size of the pooling window.
            stride (int): Stride of the pooling window.
            padding (int): Padding to be applied before pooling.
            dilation (int): Spacing between kernel elements.
        """
        super(Model, self).__init__()
        self.maxpool = nn.MaxPool2d(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies Max Pooling 2D to the input tensor.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, channels, height, width).

        Returns:
            torch.Tensor: Output tensor after Max Pooling 2D, shape (batch_size, channels, pooled_height, pooled_width).
        """
        return self.maxpool(x)

batch_size = 32
channels = 64
height = 512
width = 512
kernel_size = 4
stride = 1
padding = 1
dilation = 1

def get_inputs():
    x = torch.rand(batch_size, channels, height, width)
    return [x]

def get_init_inputs():
    return [kernel_size, stride, padding, dilation]
'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset, leading
# - a leading view slices height (second to last in a rank-3+ input)
# - dims: batch_size 1..32, channels 1..64, height 2..512, width 2..512 (the least and the blocks
#   each takes, tried on the meta device from the CPU size); kept: kernel_size=4, stride=1,
#   padding=1, dilation=1
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'channels', 'height', 'width']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 32,
                     'channels': 64,
                     'height': 512,
                     'width': 512,
                     'kernel_size': 4,
                     'stride': 1,
                     'padding': 1,
                     'dilation': 1},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 8,
                     'channels': 8,
                     'height': 16,
                     'width': 16,
                     'kernel_size': 4,
                     'stride': 1,
                     'padding': 1,
                     'dilation': 1},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 9,
                     'channels': 11,
                     'height': 17,
                     'width': 19,
                     'kernel_size': 4,
                     'stride': 1,
                     'padding': 1,
                     'dilation': 1},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 32,
                     'channels': 64,
                     'height': 512,
                     'width': 512,
                     'kernel_size': 4,
                     'stride': 1,
                     'padding': 1,
                     'dilation': 1},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/42_Max_Pooling_2D.py',
            'sha256': '615a5a6d6baa0d13774cc17b305dd0588625e13a829bdef16395f5cd101e06bc',
            'level': 1,
            'problem': 42,
            'title': 'Max_Pooling_2D',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 32 -> 8/9, channels 64 "
                      '-> 8/11, height 512 -> 16/17, width 512 -> 16/19',
                      'domain: batch_size, channels, height, width drawn']},
 'domain': {'dims': {'batch_size': {'range': [1, 32], 'cpu_max': 9},
                     'channels': {'range': [1, 64], 'cpu_max': 11},
                     'height': {'range': [2, 512], 'cpu_max': 17},
                     'width': {'range': [2, 512], 'cpu_max': 19}},
            'dtypes': ['float32'],
            'layouts': ['contiguous', 'strided', 'transposed', 'offset', 'leading'],
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
                      'specials'],
            'heads': 'height'}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'channels': ['channels', None],
               'height': ['height', None],
               'width': ['width', None],
               'kernel_size': ['kernel_size', None],
               'stride': ['stride', None],
               'padding': ['padding', None],
               'dilation': ['dilation', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 32,
           'channels': 64,
           'height': 512,
           'width': 512,
           'kernel_size': 4,
           'stride': 1,
           'padding': 1,
           'dilation': 1},
  'bytes': 4286586880,
  'flops': 0},
 {'size': 'small',
  'dims': {'batch_size': 8,
           'channels': 8,
           'height': 16,
           'width': 16,
           'kernel_size': 4,
           'stride': 1,
           'padding': 1,
           'dilation': 1},
  'bytes': 123136,
  'flops': 0},
 {'size': 'odd',
  'dims': {'batch_size': 9,
           'channels': 11,
           'height': 17,
           'width': 19,
           'kernel_size': 4,
           'stride': 1,
           'padding': 1,
           'dilation': 1},
  'bytes': 241956,
  'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'kernel_size': 4, 'stride': 1, 'padding': 1, 'dilation': 1}}

PROBLEM = DrawnProblem('kb1_42_max_pooling_2d', SOURCE, SPEC, PLAN, DERIVED)


def kb1_42_max_pooling_2d(x: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(x)


def eager(x):
    return PROBLEM.eager(x)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
