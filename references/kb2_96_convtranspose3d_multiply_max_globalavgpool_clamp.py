"""kb2_96_convtranspose3d_multiply_max_globalavgpool_clamp: KernelBench level 2, problem 96 (ConvTranspose3d_Multiply_Max_GlobalAvgPool_Clamp).

Imported by `kernelgen import kernelbench` from level2/96_ConvTranspose3d_Multiply_Max_GlobalAvgPool_Clamp.py.

At the problem's own size (batch_size=128, in_channels=3, out_channels=16, depth=16, height=32,
  width=32, kernel_size=3, stride=2, padding=1, maxpool_kernel_size=2, reduced=14415):
- x: ['batch_size', 3, 'depth', 'height', 'width'] float32
- conv_transpose_weight: [3, 'out_channels', 3, 3, 3] float32
- conv_transpose_bias: ['out_channels'] float32
CPU sizes: small, odd.
Note: runs a convolution
Note: CPU sizes scale the module's constants: batch_size 128 -> 8/9, out_channels 16 -> 8/15, depth
  16 -> 8/11, height 32 -> 8/13, width 32 -> 16/16
Note: domain: batch_size, out_channels, depth, height, width drawn

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
    Model that performs a transposed 3D convolution, multiplies by a scalar, applies max pooling, 
    global average pooling, and clamps the output.
    """
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, scale, maxpool_kernel_size):
        super(Model, self).__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.scale = scale
        self.maxpool = nn.MaxPool3d(kernel_size=maxpool_kernel_size)
        self.global_avg_pool = nn.AdaptiveAvgPool3d((1, 1, 1))
        self.clamp_min = 0
        self.clamp_max = 1

    def forward(self, x):
        x = self.conv_transpose(x)
        x = x * self.scale
        x = self.maxpool(x)
        x = self.global_avg_pool(x)
        x = torch.clamp(x, min=self.clamp_min, max=self.clamp_max)
        return x

batch_size = 128
in_channels = 3
out_channels = 16
depth, height, width = 16, 32, 32
kernel_size = 3
stride = 2
padding = 1
scale = 0.5
maxpool_kernel_size = 2

def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, scale, maxpool_kernel_size]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten convolution, mean, run on the meta
#   device at 11 sizes); for a drawn size, the largest of 12 or 0.8798 * depth * height * width
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset, leading
# - probed at the CPU sizes and at reach:depth=16,height=32,width=32 (the longest reduction)
# - a leading view slices height (second to last in a rank-3+ input)
# - dims: batch_size 1..128, out_channels 1..16, depth 2..16, height 2..32, width 2..32 (the
#   least and the blocks each takes, tried on the meta device from the CPU size); kept:
#   in_channels=3, kernel_size=3, stride=2, padding=1, maxpool_kernel_size=2
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 3, 'depth', 'height', 'width']},
            {'name': 'conv_transpose_weight',
             'shape': [3, 'out_channels', 3, 3, 3],
             'layout_varies': False},
            {'name': 'conv_transpose_bias', 'shape': ['out_channels'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 128,
                     'in_channels': 3,
                     'out_channels': 16,
                     'depth': 16,
                     'height': 32,
                     'width': 32,
                     'kernel_size': 3,
                     'stride': 2,
                     'padding': 1,
                     'maxpool_kernel_size': 2,
                     'reduced': 14415},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 8,
                     'in_channels': 3,
                     'out_channels': 8,
                     'depth': 8,
                     'height': 8,
                     'width': 16,
                     'kernel_size': 3,
                     'stride': 2,
                     'padding': 1,
                     'maxpool_kernel_size': 2,
                     'reduced': 735},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 9,
                     'in_channels': 3,
                     'out_channels': 15,
                     'depth': 11,
                     'height': 13,
                     'width': 16,
                     'kernel_size': 3,
                     'stride': 2,
                     'padding': 1,
                     'maxpool_kernel_size': 2,
                     'reduced': 1800},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 128,
                     'in_channels': 3,
                     'out_channels': 16,
                     'depth': 16,
                     'height': 32,
                     'width': 32,
                     'kernel_size': 3,
                     'stride': 2,
                     'padding': 1,
                     'maxpool_kernel_size': 2,
                     'reduced': 14415},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'level2/96_ConvTranspose3d_Multiply_Max_GlobalAvgPool_Clamp.py',
            'sha256': '164edd0135adff496adade63a772074630ebf2c13feaa450307d98a9728da2e6',
            'level': 2,
            'problem': 96,
            'title': 'ConvTranspose3d_Multiply_Max_GlobalAvgPool_Clamp',
            'convolution': True,
            'cpu': True,
            'notes': ['runs a convolution',
                      "CPU sizes scale the module's constants: batch_size 128 -> 8/9, "
                      'out_channels 16 -> 8/15, depth 16 -> 8/11, height 32 -> 8/13, width 32 -> '
                      '16/16',
                      'domain: batch_size, out_channels, depth, height, width drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 128], 'cpu_max': 9},
                     'out_channels': {'range': [1, 16], 'cpu_max': 15},
                     'depth': {'range': [2, 16], 'cpu_max': 11},
                     'height': {'range': [2, 32], 'cpu_max': 13},
                     'width': {'range': [2, 32], 'cpu_max': 16}},
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
            'derived': ['reduced'],
            'heads': 'height'}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'in_channels': ['in_channels', None],
               'out_channels': ['out_channels', None],
               'depth': ['depth', None],
               'height': ['height', None],
               'width': ['width', None],
               'kernel_size': ['kernel_size', None],
               'stride': ['stride', None],
               'padding': ['padding', None],
               'maxpool_kernel_size': ['maxpool_kernel_size', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'conv_transpose_weight', 'state': 'conv_transpose.weight', 'constant': None},
            {'name': 'conv_transpose_bias', 'state': 'conv_transpose.bias', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 128,
           'in_channels': 3,
           'out_channels': 16,
           'depth': 16,
           'height': 32,
           'width': 32,
           'kernel_size': 3,
           'stride': 2,
           'padding': 1,
           'maxpool_kernel_size': 2,
           'reduced': 14415},
  'bytes': 25179264,
  'flops': 5435817984},
 {'size': 'small',
  'dims': {'batch_size': 8,
           'in_channels': 3,
           'out_channels': 8,
           'depth': 8,
           'height': 8,
           'width': 16,
           'kernel_size': 3,
           'stride': 2,
           'padding': 1,
           'maxpool_kernel_size': 2,
           'reduced': 735},
  'bytes': 101184,
  'flops': 10616832},
 {'size': 'odd',
  'dims': {'batch_size': 9,
           'in_channels': 3,
           'out_channels': 15,
           'depth': 11,
           'height': 13,
           'width': 16,
           'kernel_size': 3,
           'stride': 2,
           'padding': 1,
           'maxpool_kernel_size': 2,
           'reduced': 1800},
  'bytes': 252564,
  'flops': 50038560}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'in_channels': 3,
           'kernel_size': 3,
           'stride': 2,
           'padding': 1,
           'maxpool_kernel_size': 2},
 'reduced': 'reduced',
 'sites': [{'factor': 12.0},
           {'factor': 0.879822, 'powers': {'depth': 1, 'height': 1, 'width': 1}}]}

PROBLEM = DrawnProblem('kb2_96_convtranspose3d_multiply_max_globalavgpool_clamp', SOURCE, SPEC, PLAN, DERIVED)


def kb2_96_convtranspose3d_multiply_max_globalavgpool_clamp(
    x: torch.Tensor,
    conv_transpose_weight: torch.Tensor,
    conv_transpose_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, conv_transpose_weight, conv_transpose_bias)


def eager(x, conv_transpose_weight, conv_transpose_bias):
    return PROBLEM.eager(x, conv_transpose_weight, conv_transpose_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
