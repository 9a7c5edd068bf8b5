"""kb1_84_conv_depthwise_2d_asymmetric_input_square_kernel: KernelBench level 1, problem 84 (conv_depthwise_2D_asymmetric_input_square_kernel).

Imported by `kernelgen import kernelbench` from KernelBench/level1/84_conv_depthwise_2D_asymmetric_input_square_kernel.py.

At the problem's own size (batch_size=64, in_channels=128, out_channels=128, kernel_size=3,
  width_in=512, height_in=256, stride=1, padding=0, reduced=9):
- x: ['batch_size', 'in_channels', 'height_in', 'width_in'] float32
- conv2d_weight: ['in_channels', 1, 3, 3] float32
CPU sizes: small, odd.
Note: runs a convolution
Note: CPU sizes scale the module's constants: batch_size 64 -> 8/9, in_channels 128 -> 8/8,
  out_channels 128 -> 8/8, width_in 512 -> 16/19, height_in 256 -> 16/17
Note: domain: batch_size, in_channels, width_in, height_in drawn

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
    Performs a depthwise 2D convolution with asymmetric input and square kernel.

    Args:
        in_channels (int): Number of channels in the input tensor.
        out_channels (int): Number of channels produced by the convolution.
        kernel_size (int): Size of the square convolution kernel.
        stride (int, optional): Stride of the convolution. Defaults to 1.
        padding (int, optional): Padding applied to the input. Defaults to 0.
        bias (bool, optional): If `True`, adds a learnable bias to the output. Defaults to `False`.
    """
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, bias: bool = False):
        super(Model, self).__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size=(kernel_size, kernel_size), stride=stride, padding=padding, groups=in_channels, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Performs the depthwise 2D convolution.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, in_channels, height_in, width_in).

        Returns:
            torch.Tensor: Output tensor of shape (batch_size, out_channels, height_out, width_out).
        """
        return self.conv2d(x)

# Test code
batch_size = 64
in_channels = 128
out_channels = 128
kernel_size = 3
width_in = 512
height_in = 256
stride = 1
padding = 0

def get_inputs():
    x = torch.rand(batch_size, in_channels, height_in, width_in)
    return [x]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten convolution, run on the meta device at
#   10 sizes); for a drawn size, the largest of 9
# - value families: normal, uniform, wide, small, negative, sorted_up, sorted_down, constant,
#   ties, denormal, neg_inf, specials; not large (small: 75 of 12544 entries off, |err| 5.66e+03
#   > atol 3.2e-05 + rtol 1.3e-06*|ref|); spike (small: 1 of 12544 entries off, |err| 5.92e-05 >
#   atol 3.2e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset, leading
# - a leading view slices height_in (second to last in a rank-3+ input)
# - dims: batch_size 1..64, in_channels 1..128, width_in 3..512, height_in 3..256 (the least and
#   the blocks each takes, tried on the meta device from the CPU size); tied: out_channels =
#   in_channels; kept: kernel_size=3, stride=1, padding=0
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_channels', 'height_in', 'width_in']},
            {'name': 'conv2d_weight', 'shape': ['in_channels', 1, 3, 3], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 64,
                     'in_channels': 128,
                     'out_channels': 128,
                     'kernel_size': 3,
                     'width_in': 512,
                     'height_in': 256,
                     'stride': 1,
                     'padding': 0,
                     'reduced': 9},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 8,
                     'in_channels': 8,
                     'out_channels': 8,
                     'kernel_size': 3,
                     'width_in': 16,
                     'height_in': 16,
                     'stride': 1,
                     'padding': 0,
                     'reduced': 9},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 9,
                     'in_channels': 8,
                     'out_channels': 8,
                     'kernel_size': 3,
                     'width_in': 19,
                     'height_in': 17,
                     'stride': 1,
                     'padding': 0,
                     'reduced': 9},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 64,
                     'in_channels': 128,
                     'out_channels': 128,
                     'kernel_size': 3,
                     'width_in': 512,
                     'height_in': 256,
                     'stride': 1,
                     'padding': 0,
                     'reduced': 9},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/84_conv_depthwise_2D_asymmetric_input_square_kernel.py',
            'sha256': '1af31dab803ef4f4e5b94f7bbe54260ef23930715610d1cbd8e7cdcd88e5c45c',
            'level': 1,
            'problem': 84,
            'title': 'conv_depthwise_2D_asymmetric_input_square_kernel',
            'convolution': True,
            'cpu': True,
            'notes': ['runs a convolution',
                      "CPU sizes scale the module's constants: batch_size 64 -> 8/9, in_channels "
                      '128 -> 8/8, out_channels 128 -> 8/8, width_in 512 -> 16/19, height_in 256 '
                      '-> 16/17',
                      'domain: batch_size, in_channels, width_in, height_in drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 64], 'cpu_max': 9},
                     'in_channels': {'range': [1, 128], 'cpu_max': 8},
                     'width_in': {'range': [3, 512], 'cpu_max': 19},
                     'height_in': {'range': [3, 256], 'cpu_max': 17}},
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
            'heads': 'height_in'}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'in_channels': ['in_channels', None],
               'out_channels': ['out_channels', None],
               'kernel_size': ['kernel_size', None],
               'width_in': ['width_in', None],
               'height_in': ['height_in', None],
               'stride': ['stride', None],
               'padding': ['padding', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'conv2d_weight', 'state': 'conv2d.weight', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 64,
           'in_channels': 128,
           'out_channels': 128,
           'kernel_size': 3,
           'width_in': 512,
           'height_in': 256,
           'stride': 1,
           'padding': 0,
           'reduced': 9},
  'bytes': 8539738624,
  'flops': 19101450240},
 {'size': 'small',
  'dims': {'batch_size': 8,
           'in_channels': 8,
           'out_channels': 8,
           'kernel_size': 3,
           'width_in': 16,
           'height_in': 16,
           'stride': 1,
           'padding': 0,
           'reduced': 9},
  'bytes': 116000,
  'flops': 225792},
 {'size': 'odd',
  'dims': {'batch_size': 9,
           'in_channels': 8,
           'out_channels': 8,
           'kernel_size': 3,
           'width_in': 19,
           'height_in': 17,
           'stride': 1,
           'padding': 0,
           'reduced': 9},
  'bytes': 166752,
  'flops': 330480}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'kernel_size': 3, 'stride': 1, 'padding': 0},
 'ties': {'out_channels': 'in_channels'},
 'reduced': 'reduced',
 'sites': [{'factor': 9.0}]}

PROBLEM = DrawnProblem('kb1_84_conv_depthwise_2d_asymmetric_input_square_kernel', SOURCE, SPEC, PLAN, DERIVED)


def kb1_84_conv_depthwise_2d_asymmetric_input_square_kernel(
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
