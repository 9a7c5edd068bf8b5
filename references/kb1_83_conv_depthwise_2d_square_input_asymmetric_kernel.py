"""kb1_83_conv_depthwise_2d_square_input_asymmetric_kernel: KernelBench level 1, problem 83 (conv_depthwise_2D_square_input_asymmetric_kernel).

Imported by `kernelgen import kernelbench` from KernelBench/level1/83_conv_depthwise_2D_square_input_asymmetric_kernel.py.

At the problem's own size (batch_size=64, in_channels=8, kernel_size=3, width=512, height=512,
  stride=1, padding=0, dilation=1, reduced=3):
- x: ['batch_size', 'in_channels', 'height', 'width'] float32
- conv2d_weight: ['in_channels', 1, 3, 1] float32
CPU sizes: small, odd.
Note: runs a convolution
Note: CPU sizes scale the module's constants: batch_size 64 -> 8/9, width 512 -> 16/19, height 512
  -> 16/17
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
    Performs a depthwise 2D convolution with a square input and an asymmetric kernel.

    Args:
        in_channels (int): Number of channels in the input tensor.
        kernel_size (int): Size of the convolution kernel.
        stride (int, optional): Stride of the convolution. Defaults to 1.
        padding (int, optional): Padding applied to the input. Defaults to 0.
        dilation (int, optional): Spacing between kernel elements. Defaults to 1.
        bias (bool, optional): If `True`, adds a learnable bias to the output. Defaults to `False`.
    """
    def __init__(self, in_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, dilation: int = 1, bias: bool = False):
        super(Model, self).__init__()
        self.conv2d = nn.Conv2d(in_channels, in_channels, kernel_size=(kernel_size, 1), stride=stride, padding=padding, dilation=dilation, groups=in_channels, bias=bias)
        
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
batch_size = 64
in_channels = 8
kernel_size = 3
width = 512
height = 512
stride = 1
padding = 0
dilation = 1

def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]

def get_init_inputs():
    return [in_channels, kernel_size, stride, padding, dilation]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten convolution, run on the meta device at
#   10 sizes); for a drawn size, the largest of 3
# - value families: normal, uniform, wide, small, negative, sorted_up, sorted_down, constant,
#   ties, denormal, neg_inf, specials; not large (small: 23 of 14336 entries off, |err| 1.57e+03
#   > atol 1.6e-05 + rtol 1.3e-06*|ref|); spike (small: 3 of 14336 entries off, |err| 2.66e-05 >
#   atol 1.6e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset, leading
# - a leading view slices height (second to last in a rank-3+ input)
# - dims: batch_size 1..64, in_channels 1..8, width 1..512, height 3..512 (the least and the
#   blocks each takes, tried on the meta device from the CPU size); kept: kernel_size=3,
#   stride=1, padding=0, dilation=1
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_channels', 'height', 'width']},
            {'name': 'conv2d_weight', 'shape': ['in_channels', 1, 3, 1], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 64,
                     'in_channels': 8,
                     'kernel_size': 3,
                     'width': 512,
                     'height': 512,
                     'stride': 1,
                     'padding': 0,
                     'dilation': 1,
                     'reduced': 3},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 8,
                     'in_channels': 8,
                     'kernel_size': 3,
                     'width': 16,
                     'height': 16,
                     'stride': 1,
                     'padding': 0,
                     'dilation': 1,
                     'reduced': 3},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 9,
                     'in_channels': 8,
                     'kernel_size': 3,
                     'width': 19,
                     'height': 17,
                     'stride': 1,
                     'padding': 0,
                     'dilation': 1,
                     'reduced': 3},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 64,
                     'in_channels': 8,
                     'kernel_size': 3,
                     'width': 512,
                     'height': 512,
                     'stride': 1,
                     'padding': 0,
                     'dilation': 1,
                     'reduced': 3},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/83_conv_depthwise_2D_square_input_asymmetric_kernel.py',
            'sha256': '09f5690aceba6d92769440e5a2698a76aec7b1f45d63e3198af5884c4d40ea10',
            'level': 1,
            'problem': 83,
            'title': 'conv_depthwise_2D_square_input_asymmetric_kernel',
            'convolution': True,
            'cpu': True,
            'notes': ['runs a convolution',
                      "CPU sizes scale the module's constants: batch_size 64 -> 8/9, width 512 -> "
                      '16/19, height 512 -> 16/17',
                      'domain: batch_size, in_channels, width, height drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 64], 'cpu_max': 9},
                     'in_channels': {'range': [1, 8]},
                     'width': {'range': [1, 512], 'cpu_max': 19},
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
               'padding': ['padding', None],
               'dilation': ['dilation', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'conv2d_weight', 'state': 'conv2d.weight', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 64,
           'in_channels': 8,
           'kernel_size': 3,
           'width': 512,
           'height': 512,
           'stride': 1,
           'padding': 0,
           'dilation': 1,
           'reduced': 3},
  'bytes': 1071644768,
  'flops': 802160640},
 {'size': 'small',
  'dims': {'batch_size': 8,
           'in_channels': 8,
           'kernel_size': 3,
           'width': 16,
           'height': 16,
           'stride': 1,
           'padding': 0,
           'dilation': 1,
           'reduced': 3},
  'bytes': 122976,
  'flops': 86016},
 {'size': 'odd',
  'dims': {'batch_size': 9,
           'in_channels': 8,
           'kernel_size': 3,
           'width': 19,
           'height': 17,
           'stride': 1,
           'padding': 0,
           'dilation': 1,
           'reduced': 3},
  'bytes': 175200,
  'flops': 123120}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'kernel_size': 3, 'stride': 1, 'padding': 0, 'dilation': 1},
 'reduced': 'reduced',
 'sites': [{'factor': 3.0}]}

PROBLEM = DrawnProblem('kb1_83_conv_depthwise_2d_square_input_asymmetric_kernel', SOURCE, SPEC, PLAN, DERIVED)


def kb1_83_conv_depthwise_2d_square_input_asymmetric_kernel(
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
