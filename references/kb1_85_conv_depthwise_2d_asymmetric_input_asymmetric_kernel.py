"""kb1_85_conv_depthwise_2d_asymmetric_input_asymmetric_kernel: KernelBench level 1, problem 85 (conv_depthwise_2D_asymmetric_input_asymmetric_kernel).

Imported by `kernelgen import kernelbench` from KernelBench/level1/85_conv_depthwise_2D_asymmetric_input_asymmetric_kernel.py.

At the problem's own size (batch_size=32, in_channels=128, out_channels=128, kernel_size_h=3,
  kernel_size_w=7, width=256, height=128, stride_h=1, stride_w=1, padding_h=0, padding_w=0,
  dilation_h=1, dilation_w=1, reduced=21):
- x: ['batch_size', 'in_channels', 'height', 'width'] float32
- conv2d_weight: ['in_channels', 1, 3, 7] float32
CPU sizes: small, odd.
Note: runs a convolution
Note: CPU sizes scale the module's constants: batch_size 32 -> 8/9, in_channels 128 -> 8/11, width
  256 -> 16/19, height 128 -> 16/17
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
    Performs a depthwise 2D convolution with asymmetric input and asymmetric kernel.

    Args:
        in_channels (int): Number of channels in the input tensor.
        out_channels (int): Number of channels produced by the convolution.
        kernel_size_h (int): Height of the convolution kernel.
        kernel_size_w (int): Width of the convolution kernel.
        stride_h (int, optional): Stride of the convolution in height dimension. Defaults to 1.
        stride_w (int, optional): Stride of the convolution in width dimension. Defaults to 1.
        padding_h (int, optional): Padding applied to the input in height dimension. Defaults to 0.
        padding_w (int, optional): Padding applied to the input in width dimension. Defaults to 0.
        dilation_h (int, optional): Spacing between kernel elements in height dimension. Defaults to 1.
        dilation_w (int, optional): Spacing between kernel elements in width dimension. Defaults to 1.
        groups (int, optional): Number of blocked connections from input channels to output channels. Defaults to 1.
        bias (bool, optional): If `True`, adds a learnable bias to the output. Defaults to `False`.
    """
    def __init__(self, in_channels: int, out_channels: int, kernel_size_h: int, kernel_size_w: int, stride_h: int = 1, stride_w: int = 1, padding_h: int = 0, padding_w: int = 0, dilation_h: int = 1, dilation_w: int = 1, groups: int = 1, bias: bool = False):
        super(Model, self).__init__()
        self.conv2d = nn.Conv2d(in_channels, in_channels, (kernel_size_h, kernel_size_w), stride=(stride_h, stride_w), padding=(padding_h, padding_w), dilation=(dilation_h, dilation_w), groups=in_channels, bias=bias)
        
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Performs the depthwise 2D convolution.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, in_channels, height, width).

        Returns:
            torch.Tensor: Output tensor of shape (batch_size, out_channels, height_out, width_out).
        """
        return self.conv2d(x)

# Test code
batch_size = 32
in_channels = 128
out_channels = 128
kernel_size_h = 3
kernel_size_w = 7
width = 256
height = 128
stride_h = 1
stride_w = 1
padding_h = 0
padding_w = 0
dilation_h = 1
dilation_w = 1
groups = in_channels

def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size_h, kernel_size_w, stride_h, stride_w, padding_h, padding_w, dilation_h, dilation_w, groups]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten convolution, run on the meta device at
#   10 sizes); for a drawn size, the largest of 21
# - value families: normal, uniform, wide, small, negative, sorted_up, sorted_down, constant,
#   ties, denormal, neg_inf, specials; not large (small: 133 of 8960 entries off, |err| 2.69e+03
#   > atol 4.4e-05 + rtol 1.3e-06*|ref|); spike (small: 1 of 8960 entries off, |err| 5.25e-05 >
#   atol 4.4e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset, leading
# - a leading view slices height (second to last in a rank-3+ input)
# - dims: batch_size 1..32, in_channels 1..128, width 7..256, height 3..128 (the least and the
#   blocks each takes, tried on the meta device from the CPU size); kept: out_channels=128,
#   kernel_size_h=3, kernel_size_w=7, stride_h=1, stride_w=1, padding_h=0, padding_w=0,
#   dilation_h=1, dilation_w=1
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_channels', 'height', 'width']},
            {'name': 'conv2d_weight', 'shape': ['in_channels', 1, 3, 7], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 32,
                     'in_channels': 128,
                     'out_channels': 128,
                     'kernel_size_h': 3,
                     'kernel_size_w': 7,
                     'width': 256,
                     'height': 128,
                     'stride_h': 1,
                     'stride_w': 1,
                     'padding_h': 0,
                     'padding_w': 0,
                     'dilation_h': 1,
                     'dilation_w': 1,
                     'reduced': 21},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 8,
                     'in_channels': 8,
                     'out_channels': 128,
                     'kernel_size_h': 3,
                     'kernel_size_w': 7,
                     'width': 16,
                     'height': 16,
                     'stride_h': 1,
                     'stride_w': 1,
                     'padding_h': 0,
                     'padding_w': 0,
                     'dilation_h': 1,
                     'dilation_w': 1,
                     'reduced': 21},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 9,
                     'in_channels': 11,
                     'out_channels': 128,
                     'kernel_size_h': 3,
                     'kernel_size_w': 7,
                     'width': 19,
                     'height': 17,
                     'stride_h': 1,
                     'stride_w': 1,
                     'padding_h': 0,
                     'padding_w': 0,
                     'dilation_h': 1,
                     'dilation_w': 1,
                     'reduced': 21},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 32,
                     'in_channels': 128,
                     'out_channels': 128,
                     'kernel_size_h': 3,
                     'kernel_size_w': 7,
                     'width': 256,
                     'height': 128,
                     'stride_h': 1,
                     'stride_w': 1,
                     'padding_h': 0,
                     'padding_w': 0,
                     'dilation_h': 1,
                     'dilation_w': 1,
                     'reduced': 21},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/85_conv_depthwise_2D_asymmetric_input_asymmetric_kernel.py',
            'sha256': '5538e14c57c791611e5e6a663cbed1051af510257a603100a25cbebc78b7a8aa',
            'level': 1,
            'problem': 85,
            'title': 'conv_depthwise_2D_asymmetric_input_asymmetric_kernel',
            'convolution': True,
            'cpu': True,
            'notes': ['runs a convolution',
                      "CPU sizes scale the module's constants: batch_size 32 -> 8/9, in_channels "
                      '128 -> 8/11, width 256 -> 16/19, height 128 -> 16/17',
                      'domain: batch_size, in_channels, width, height drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 32], 'cpu_max': 9},
                     'in_channels': {'range': [1, 128], 'cpu_max': 11},
                     'width': {'range': [7, 256], 'cpu_max': 19},
                     'height': {'range': [3, 128], 'cpu_max': 17}},
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
               'out_channels': ['out_channels', None],
               'kernel_size_h': ['kernel_size_h', None],
               'kernel_size_w': ['kernel_size_w', None],
               'width': ['width', None],
               'height': ['height', None],
               'stride_h': ['stride_h', None],
               'stride_w': ['stride_w', None],
               'padding_h': ['padding_h', None],
               'padding_w': ['padding_w', None],
               'dilation_h': ['dilation_h', None],
               'dilation_w': ['dilation_w', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'conv2d_weight', 'state': 'conv2d.weight', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 32,
           'in_channels': 128,
           'out_channels': 128,
           'kernel_size_h': 3,
           'kernel_size_w': 7,
           'width': 256,
           'height': 128,
           'stride_h': 1,
           'stride_w': 1,
           'padding_h': 0,
           'padding_w': 0,
           'dilation_h': 1,
           'dilation_w': 1,
           'reduced': 21},
  'bytes': 1052977664,
  'flops': 5419008000},
 {'size': 'small',
  'dims': {'batch_size': 8,
           'in_channels': 8,
           'out_channels': 128,
           'kernel_size_h': 3,
           'kernel_size_w': 7,
           'width': 16,
           'height': 16,
           'stride_h': 1,
           'stride_w': 1,
           'padding_h': 0,
           'padding_w': 0,
           'dilation_h': 1,
           'dilation_w': 1,
           'reduced': 21},
  'bytes': 102048,
  'flops': 376320},
 {'size': 'odd',
  'dims': {'batch_size': 9,
           'in_channels': 11,
           'out_channels': 128,
           'kernel_size_h': 3,
           'kernel_size_w': 7,
           'width': 19,
           'height': 17,
           'stride_h': 1,
           'stride_w': 1,
           'padding_h': 0,
           'padding_w': 0,
           'dilation_h': 1,
           'dilation_w': 1,
           'reduced': 21},
  'bytes': 206052,
  'flops': 810810}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'out_channels': 128,
           'kernel_size_h': 3,
           'kernel_size_w': 7,
           'stride_h': 1,
           'stride_w': 1,
           'padding_h': 0,
           'padding_w': 0,
           'dilation_h': 1,
           'dilation_w': 1},
 'reduced': 'reduced',
 'sites': [{'factor': 21.0}]}

PROBLEM = DrawnProblem('kb1_85_conv_depthwise_2d_asymmetric_input_asymmetric_kernel', SOURCE, SPEC, PLAN, DERIVED)


def kb1_85_conv_depthwise_2d_asymmetric_input_asymmetric_kernel(
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
