"""kb1_82_conv_depthwise_2d_square_input_square_kernel: KernelBench level 1, problem 82 (conv_depthwise_2D_square_input_square_kernel).

Imported by `kernelgen import kernelbench` from KernelBench/level1/82_conv_depthwise_2D_square_input_square_kernel.py.

At the problem's own size (batch_size=16, in_channels=64, kernel_size=3, width=512, height=512,
  stride=1, padding=0, reduced=9):
- x: ['batch_size', 'in_channels', 'height', 'width'] float32
- conv2d_weight: ['in_channels', 1, 3, 3] float32
CPU sizes: small, odd.
Note: runs a convolution
Note: CPU sizes scale the module's constants: batch_size 16 -> 8/9, in_channels 64 -> 8/11, width
  512 -> 16/19, height 512 -> 16/17
Note: domain: batch_size, in_channels, width, height drawn

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
    Performs a depthwise 2D convolution operation with square input and square kernel.

    Args:
        in_channels (int): Number of channels in the input tensor.
        kernel_size (int): Size of the convolution kernel.
        stride (int, optional): Stride of the convolution. Defaults to 1.
        padding (int, optional): Padding applied to the input. Defaults to 0.
        bias (bool, optional): If `True`, adds a learnable bias to the output. Defaults to `False`.
    """
    def __init__(self, in_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, bias: bool = False):
        super(Model, self).__init__()
        self.conv2d = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride, padding=padding, groups=in_channels, bias=bias)
        
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Performs the depthwise 2D convolution.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, in_channels, height, width).

        Returns:
            torch.Tensor: Output tensor of shape (batch_size, in_channels, height_out, width_out).
        """
        return self.conv2d(x)

# Test code
batch_size = 16
in_channels = 64
kernel_size = 3
width = 512
height = 512
stride = 1
padding = 0

def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]

def get_init_inputs():
    return [in_channels, kernel_size, stride, padding]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten convolution, run on the meta device at
#   10 sizes); for a drawn size, the largest of 9
# - value families: normal, uniform, wide, small, negative, sorted_up, sorted_down, constant,
#   ties, denormal, neg_inf, specials; not large (small: 77 of 12544 entries off, |err| 2.99e+03
#   > atol 3.2e-05 + rtol 1.3e-06*|ref|); spike (small: 4 of 12544 entries off, |err| 6.71e-05 >
#   atol 3.2e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset, leading
# - a leading view slices height (second to last in a rank-3+ input)
# - dims: batch_size 1..16, in_channels 1..64, width 3..512, height 3..512 (the least and the
#   blocks each takes, tried on the meta device from the CPU size); kept: kernel_size=3,
#   stride=1, padding=0
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_channels', 'height', 'width']},
            {'name': 'conv2d_weight', 'shape': ['in_channels', 1, 3, 3], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 16,
                     'in_channels': 64,
                     'kernel_size': 3,
                     'width': 512,
                     'height': 512,
                     'stride': 1,
                     'padding': 0,
                     'reduced': 9},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 8,
                     'in_channels': 8,
                     'kernel_size': 3,
                     'width': 16,
                     'height': 16,
                     'stride': 1,
                     'padding': 0,
                     'reduced': 9},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 9,
                     'in_channels': 11,
                     'kernel_size': 3,
                     'width': 19,
                     'height': 17,
                     'stride': 1,
                     'padding': 0,
                     'reduced': 9},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 16,
                     'in_channels': 64,
                     'kernel_size': 3,
                     'width': 512,
                     'height': 512,
                     'stride': 1,
                     'padding': 0,
                     'reduced': 9},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/82_conv_depthwise_2D_square_input_square_kernel.py',
            'sha256': '23578d4c1257ee9c2b86ab8969eb91292aca2b9699ab15b2b72ea7e8d438078f',
            'level': 1,
            'problem': 82,
            'title': 'conv_depthwise_2D_square_input_square_kernel',
            'convolution': True,
            'cpu': True,
            'notes': ['runs a convolution',
                      "CPU sizes scale the module's constants: batch_size 16 -> 8/9, in_channels "
                      '64 -> 8/11, width 512 -> 16/19, height 512 -> 16/17',
                      'domain: batch_size, in_channels, width, height drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 16], 'cpu_max': 9},
                     'in_channels': {'range': [1, 64], 'cpu_max': 11},
                     'width': {'range': [3, 512], 'cpu_max': 19},
                     'height': {'range': [3, 512], 'cpu_max': 17}},
            'dtypes': ['float32'],
            'layouts': ['contiguous', 'strided', 'transposed', 'offset', 'leading'],
            'dists': ['normal',
                      'uniform',
                      'wide',
                      'small',
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
               'in_channels': ['in_channels', None],
               'kernel_size': ['kernel_size', None],
               'width': ['width', None],
               'height': ['height', None],
               'stride': ['stride', None],
               'padding': ['padding', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'conv2d_weight', 'state': 'conv2d.weight', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 16,
           'in_channels': 64,
           'kernel_size': 3,
           'width': 512,
           'height': 512,
           'stride': 1,
           'padding': 0,
           'reduced': 9},
  'bytes': 2139113728,
  'flops': 4794163200},
 {'size': 'small',
  'dims': {'batch_size': 8,
           'in_channels': 8,
           'kernel_size': 3,
           'width': 16,
           'height': 16,
           'stride': 1,
           'padding': 0,
           'reduced': 9},
  'bytes': 116000,
  'flops': 225792},
 {'size': 'odd',
  'dims': {'batch_size': 9,
           'in_channels': 11,
           'kernel_size': 3,
           'width': 19,
           'height': 17,
           'stride': 1,
           'padding': 0,
           'reduced': 9},
  'bytes': 229284,
  'flops': 454410}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'kernel_size': 3, 'stride': 1, 'padding': 0},
 'reduced': 'reduced',
 'sites': [{'factor': 9.0}]}

PROBLEM = DrawnProblem('kb1_82_conv_depthwise_2d_square_input_square_kernel', SOURCE, SPEC, PLAN, DERIVED)


def kb1_82_conv_depthwise_2d_square_input_square_kernel(
    x: torch.Tensor,
    conv2d_weight: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, conv2d_weight)


def eager(x, conv2d_weight):
    return PROBLEM.eager(x, conv2d_weight)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
