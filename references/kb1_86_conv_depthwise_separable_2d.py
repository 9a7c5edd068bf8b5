"""kb1_86_conv_depthwise_separable_2d: KernelBench level 1, problem 86 (conv_depthwise_separable_2D).

Imported by `kernelgen import kernelbench` from KernelBench/level1/86_conv_depthwise_separable_2D.py.

At the problem's own size (batch_size=16, in_channels=64, out_channels=128, kernel_size=3,
  width=512, height=512, stride=1, padding=1, dilation=1, reduced=64):
- x: ['batch_size', 'in_channels', 'height', 'width'] float32
- depthwise_weight: ['in_channels', 1, 3, 3] float32
- pointwise_weight: ['out_channels', 'in_channels', 1, 1] float32
CPU sizes: small, odd.
Note: runs a convolution
Note: CPU sizes scale the module's constants: batch_size 16 -> 8/9, in_channels 64 -> 8/11,
  out_channels 128 -> 8/13, width 512 -> 8/15, height 512 -> 16/17
Note: domain: batch_size, in_channels, out_channels, width, height drawn

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
    Performs a depthwise-separable 2D convolution operation.

    Args:
        in_channels (int): Number of channels in the input tensor.
        out_channels (int): Number of channels produced by the convolution.
        kernel_size (int): Size of the convolution kernel.
        stride (int, optional): Stride of the convolution. Defaults to 1.
        padding (int, optional): Padding applied to the input. Defaults to 0.
        dilation (int, optional): Spacing between kernel elements. Defaults to 1.
        bias (bool, optional): If `True`, adds a learnable bias to the output. Defaults to `False`.
    """
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, dilation: int = 1, bias: bool = False):
        super(Model, self).__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride, padding=padding, dilation=dilation, groups=in_channels, bias=bias)
        self.pointwise = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=bias)
        
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Performs the depthwise-separable 2D convolution.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, in_channels, height, width).

        Returns:
            torch.Tensor: Output tensor of shape (batch_size, out_channels, height_out, width_out).
        """
        x = self.depthwise(x)
        x = self.pointwise(x)
        return x

# Test code
batch_size = 16
in_channels = 64
out_channels = 128
kernel_size = 3
width = 512
height = 512
stride = 1
padding = 1
dilation = 1

def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten convolution, run on the meta device at
#   11 sizes); for a drawn size, the largest of 9 or in_channels
# - value families: normal, uniform, wide, small, negative, sorted_up, sorted_down, constant,
#   ties, denormal, neg_inf, specials; not large (small: 175 of 8192 entries off, |err| 1.36e+03
#   > atol 3.2e-05 + rtol 1.3e-06*|ref|); spike (small: 1 of 8192 entries off, |err| 5.14e-05 >
#   atol 3.2e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset, leading
# - probed at the CPU sizes and at reach:in_channels=64 (the longest reduction)
# - a leading view slices height (second to last in a rank-3+ input)
# - dims: batch_size 1..16, in_channels 1..64, out_channels 1..128, width 1..512, height 1..512
#   (the least and the blocks each takes, tried on the meta device from the CPU size); kept:
#   kernel_size=3, stride=1, padding=1, dilation=1
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_channels', 'height', 'width']},
            {'name': 'depthwise_weight',
             'shape': ['in_channels', 1, 3, 3],
             'layout_varies': False},
            {'name': 'pointwise_weight',
             'shape': ['out_channels', 'in_channels', 1, 1],
             'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 16,
                     'in_channels': 64,
                     'out_channels': 128,
                     'kernel_size': 3,
                     'width': 512,
                     'height': 512,
                     'stride': 1,
                     'padding': 1,
                     'dilation': 1,
                     'reduced': 64},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 8,
                     'in_channels': 8,
                     'out_channels': 8,
                     'kernel_size': 3,
                     'width': 8,
                     'height': 16,
                     'stride': 1,
                     'padding': 1,
                     'dilation': 1,
                     'reduced': 9},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 9,
                     'in_channels': 11,
                     'out_channels': 13,
                     'kernel_size': 3,
                     'width': 15,
                     'height': 17,
                     'stride': 1,
                     'padding': 1,
                     'dilation': 1,
                     'reduced': 11},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 16,
                     'in_channels': 64,
                     'out_channels': 128,
                     'kernel_size': 3,
                     'width': 512,
                     'height': 512,
                     'stride': 1,
                     'padding': 1,
                     'dilation': 1,
                     'reduced': 64},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/86_conv_depthwise_separable_2D.py',
            'sha256': 'cee48ffdb13900385835c6390154a3886bd9ad8b84154ae1d37f0148cd8feabe',
            'level': 1,
            'problem': 86,
            'title': 'conv_depthwise_separable_2D',
            'convolution': True,
            'cpu': True,
            'notes': ['runs a convolution',
                      "CPU sizes scale the module's constants: batch_size 16 -> 8/9, in_channels "
                      '64 -> 8/11, out_channels 128 -> 8/13, width 512 -> 8/15, height 512 -> '
                      '16/17',
                      'domain: batch_size, in_channels, out_channels, width, height drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 16], 'cpu_max': 9},
                     'in_channels': {'range': [1, 64], 'cpu_max': 11},
                     'out_channels': {'range': [1, 128], 'cpu_max': 13},
                     'width': {'range': [1, 512], 'cpu_max': 15},
                     'height': {'range': [1, 512], 'cpu_max': 17}},
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
               'kernel_size': ['kernel_size', None],
               'width': ['width', None],
               'height': ['height', None],
               'stride': ['stride', None],
               'padding': ['padding', None],
               'dilation': ['dilation', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'depthwise_weight', 'state': 'depthwise.weight', 'constant': None},
            {'name': 'pointwise_weight', 'state': 'pointwise.weight', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 16,
           'in_channels': 64,
           'out_channels': 128,
           'kernel_size': 3,
           'width': 512,
           'height': 512,
           'stride': 1,
           'padding': 1,
           'dilation': 1,
           'reduced': 64},
  'bytes': 3221260544,
  'flops': 73551314944},
 {'size': 'small',
  'dims': {'batch_size': 8,
           'in_channels': 8,
           'out_channels': 8,
           'kernel_size': 3,
           'width': 8,
           'height': 16,
           'stride': 1,
           'padding': 1,
           'dilation': 1,
           'reduced': 9},
  'bytes': 66080,
  'flops': 278528},
 {'size': 'odd',
  'dims': {'batch_size': 9,
           'in_channels': 11,
           'out_channels': 13,
           'kernel_size': 3,
           'width': 15,
           'height': 17,
           'stride': 1,
           'padding': 1,
           'dilation': 1,
           'reduced': 11},
  'bytes': 221288,
  'flops': 1110780}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'kernel_size': 3, 'stride': 1, 'padding': 1, 'dilation': 1},
 'reduced': 'reduced',
 'sites': [{'factor': 9.0}, {'factor': 1.0, 'powers': {'in_channels': 1}}]}

PROBLEM = DrawnProblem('kb1_86_conv_depthwise_separable_2d', SOURCE, SPEC, PLAN, DERIVED)


def kb1_86_conv_depthwise_separable_2d(
    x: torch.Tensor,
    depthwise_weight: torch.Tensor,
    pointwise_weight: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, depthwise_weight, pointwise_weight)


def eager(x, depthwise_weight, pointwise_weight):
    return PROBLEM.eager(x, depthwise_weight, pointwise_weight)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
