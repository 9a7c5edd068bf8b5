"""kb2_48_conv3d_scaling_tanh_multiply_sigmoid: KernelBench level 2, problem 48 (Conv3d_Scaling_Tanh_Multiply_Sigmoid).

Imported by `kernelgen import kernelbench` from level2/48_Conv3d_Scaling_Tanh_Multiply_Sigmoid.py.

At the problem's own size (batch_size=128, in_channels=3, out_channels=16, depth=16, height=64,
  width=64, kernel_size=3, scaling_factor=2, reduced=81):
- x: ['batch_size', 3, 'depth', 'height', 'width'] float32
- scaling_factor: ['out_channels', 1, 1, 1] float32
- bias: ['out_channels', 1, 1, 1] float32
- conv_weight: ['out_channels', 3, 3, 3, 3] float32
- conv_bias: ['out_channels'] float32
CPU sizes: small, odd.
Note: runs a convolution
Note: CPU sizes scale the module's constants: batch_size 128 -> 8/9, out_channels 16 -> 8/13, depth
  16 -> 8/11, height 64 -> 8/8, width 64 -> 8/8
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
    Model that performs a 3D convolution, scales the output, applies tanh, multiplies by a scaling factor, and applies sigmoid.
    """
    def __init__(self, in_channels, out_channels, kernel_size, scaling_factor, bias_shape):
        super(Model, self).__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.scaling_factor = nn.Parameter(torch.randn(bias_shape))
        self.bias = nn.Parameter(torch.randn(bias_shape)) 

    def forward(self, x):
        x = self.conv(x)
        x = x * self.scaling_factor 
        x = torch.tanh(x)
        x = x * self.bias
        x = torch.sigmoid(x)
        return x

batch_size = 128
in_channels = 3
out_channels = 16
depth, height, width = 16, 64, 64
kernel_size = 3
scaling_factor = 2
bias_shape = (out_channels, 1, 1, 1)

def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scaling_factor, bias_shape]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten convolution, run on the meta device at
#   11 sizes); for a drawn size, the largest of 81
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset, leading
# - a leading view slices height (second to last in a rank-3+ input)
# - dims: batch_size 1..128, out_channels 1..16, depth 3..16, height 3..64, width 3..64 (the
#   least and the blocks each takes, tried on the meta device from the CPU size); kept:
#   in_channels=3, kernel_size=3, scaling_factor=2
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 3, 'depth', 'height', 'width']},
            {'name': 'scaling_factor', 'shape': ['out_channels', 1, 1, 1], 'layout_varies': False},
            {'name': 'bias', 'shape': ['out_channels', 1, 1, 1], 'layout_varies': False},
            {'name': 'conv_weight', 'shape': ['out_channels', 3, 3, 3, 3], 'layout_varies': False},
            {'name': 'conv_bias', 'shape': ['out_channels'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 128,
                     'in_channels': 3,
                     'out_channels': 16,
                     'depth': 16,
                     'height': 64,
                     'width': 64,
                     'kernel_size': 3,
                     'scaling_factor': 2,
                     'reduced': 81},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 8,
                     'in_channels': 3,
                     'out_channels': 8,
                     'depth': 8,
                     'height': 8,
                     'width': 8,
                     'kernel_size': 3,
                     'scaling_factor': 2,
                     'reduced': 81},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 9,
                     'in_channels': 3,
                     'out_channels': 13,
                     'depth': 11,
                     'height': 8,
                     'width': 8,
                     'kernel_size': 3,
                     'scaling_factor': 2,
                     'reduced': 81},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 128,
                     'in_channels': 3,
                     'out_channels': 16,
                     'depth': 16,
                     'height': 64,
                     'width': 64,
                     'kernel_size': 3,
                     'scaling_factor': 2,
                     'reduced': 81},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'level2/48_Conv3d_Scaling_Tanh_Multiply_Sigmoid.py',
            'sha256': 'a2f6bc6b97dfff819695956bdfb21f3a1c6873f81eb6c31e19377b1079a0a157',
            'level': 2,
            'problem': 48,
            'title': 'Conv3d_Scaling_Tanh_Multiply_Sigmoid',
            'convolution': True,
            'cpu': True,
            'notes': ['runs a convolution',
                      "CPU sizes scale the module's constants: batch_size 128 -> 8/9, "
                      'out_channels 16 -> 8/13, depth 16 -> 8/11, height 64 -> 8/8, width 64 -> '
                      '8/8',
                      'domain: batch_size, out_channels, depth, height, width drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 128], 'cpu_max': 9},
                     'out_channels': {'range': [1, 16], 'cpu_max': 13},
                     'depth': {'range': [3, 16], 'cpu_max': 11},
                     'height': {'range': [3, 64], 'cpu_max': 8},
                     'width': {'range': [3, 64], 'cpu_max': 8}},
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
               'scaling_factor': ['scaling_factor', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'scaling_factor', 'state': 'scaling_factor', 'constant': None},
            {'name': 'bias', 'state': 'bias', 'constant': None},
            {'name': 'conv_weight', 'state': 'conv.weight', 'constant': None},
            {'name': 'conv_bias', 'state': 'conv.bias', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 128,
           'in_channels': 3,
           'out_channels': 16,
           'depth': 16,
           'height': 64,
           'width': 64,
           'kernel_size': 3,
           'scaling_factor': 2,
           'reduced': 81},
  'bytes': 541529344,
  'flops': 17854857216},
 {'size': 'small',
  'dims': {'batch_size': 8,
           'in_channels': 3,
           'out_channels': 8,
           'depth': 8,
           'height': 8,
           'width': 8,
           'kernel_size': 3,
           'scaling_factor': 2,
           'reduced': 81},
  'bytes': 107136,
  'flops': 2239488},
 {'size': 'odd',
  'dims': {'batch_size': 9,
           'in_channels': 3,
           'out_channels': 13,
           'depth': 11,
           'height': 8,
           'width': 8,
           'kernel_size': 3,
           'scaling_factor': 2,
           'reduced': 81},
  'bytes': 232032,
  'flops': 6141096}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'in_channels': 3, 'kernel_size': 3, 'scaling_factor': 2},
 'reduced': 'reduced',
 'sites': [{'factor': 81.0}]}

PROBLEM = DrawnProblem('kb2_48_conv3d_scaling_tanh_multiply_sigmoid', SOURCE, SPEC, PLAN, DERIVED)


def kb2_48_conv3d_scaling_tanh_multiply_sigmoid(
    x: torch.Tensor,
    scaling_factor: torch.Tensor,
    bias: torch.Tensor,
    conv_weight: torch.Tensor,
    conv_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, scaling_factor, bias, conv_weight, conv_bias)


def eager(x, scaling_factor, bias, conv_weight, conv_bias):
    return PROBLEM.eager(x, scaling_factor, bias, conv_weight, conv_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
