"""kb2_58_convtranspose3d_logsumexp_hardswish_subtract_clamp: KernelBench level 2, problem 58 (ConvTranspose3d_LogSumExp_HardSwish_Subtract_Clamp).

Imported by `kernelgen import kernelbench` from level2/58_ConvTranspose3d_LogSumExp_HardSwish_Subtract_Clamp.py.

At the problem's own size (batch_size=128, in_channels=3, out_channels=16, depth=16, height=32,
  width=32, kernel_size=3, stride=2, padding=1, bias_shape_0=1, bias_shape_1=1, bias_shape_2=1,
  bias_shape_3=1, reduced=16):
- x: ['batch_size', 3, 'depth', 'height', 'width'] float32
- bias: [1, 1, 1, 1] float32
- conv_transpose_weight: [3, 'out_channels', 3, 3, 3] float32
- conv_transpose_bias: ['out_channels'] float32
CPU sizes: small, odd.
Note: runs a convolution
Note: CPU sizes scale the module's constants: batch_size 128 -> 4/5, out_channels 16 -> 8/13, depth
  16 -> 8/9, height 32 -> 8/11, width 32 -> 8/8
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
    Model that performs a 3D transposed convolution, LogSumExp, HardSwish, subtraction, clamp operations.
    """
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, bias_shape):
        super(Model, self).__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.bias = nn.Parameter(torch.randn(1, 1, 1, 1)) 

    def forward(self, x):
        x = self.conv_transpose(x)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        x = x * torch.sigmoid(x + 3) / 6
        x = x - self.bias
        x = torch.clamp(x, min=-1, max=1)
        return x

batch_size = 128
in_channels = 3
out_channels = 16
depth, height, width = 16, 32, 32
kernel_size = 3
stride = 2
padding = 1
bias_shape = (1, 1, 1, 1)  

def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, bias_shape]
'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten convolution, logsumexp, run on the meta
#   device at 11 sizes); for a drawn size, the largest of 12 or out_channels
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset, leading
# - probed at the CPU sizes and at reach:out_channels=16 (the longest reduction)
# - a leading view slices height (second to last in a rank-3+ input)
# - dims: batch_size 1..128, out_channels 1..16, depth 1..16, height 1..32, width 1..32 (the
#   least and the blocks each takes, tried on the meta device from the CPU size); kept:
#   in_channels=3, kernel_size=3, stride=2, padding=1, bias_shape_0=1, bias_shape_1=1,
#   bias_shape_2=1, bias_shape_3=1
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 3, 'depth', 'height', 'width']},
            {'name': 'bias', 'shape': [1, 1, 1, 1], 'layout_varies': False},
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
                     'bias_shape_0': 1,
                     'bias_shape_1': 1,
                     'bias_shape_2': 1,
                     'bias_shape_3': 1,
                     'reduced': 16},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 4,
                     'in_channels': 3,
                     'out_channels': 8,
                     'depth': 8,
                     'height': 8,
                     'width': 8,
                     'kernel_size': 3,
                     'stride': 2,
                     'padding': 1,
                     'bias_shape_0': 1,
                     'bias_shape_1': 1,
                     'bias_shape_2': 1,
                     'bias_shape_3': 1,
                     'reduced': 12},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 5,
                     'in_channels': 3,
                     'out_channels': 13,
                     'depth': 9,
                     'height': 11,
                     'width': 8,
                     'kernel_size': 3,
                     'stride': 2,
                     'padding': 1,
                     'bias_shape_0': 1,
                     'bias_shape_1': 1,
                     'bias_shape_2': 1,
                     'bias_shape_3': 1,
                     'reduced': 13},
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
                     'bias_shape_0': 1,
                     'bias_shape_1': 1,
                     'bias_shape_2': 1,
                     'bias_shape_3': 1,
                     'reduced': 16},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'level2/58_ConvTranspose3d_LogSumExp_HardSwish_Subtract_Clamp.py',
            'sha256': 'd89693a52be9080caf580e0a21691a19d1cf9ef44c31a9466b6df97178ac9c21',
            'level': 2,
            'problem': 58,
            'title': 'ConvTranspose3d_LogSumExp_HardSwish_Subtract_Clamp',
            'convolution': True,
            'cpu': True,
            'notes': ['runs a convolution',
                      "CPU sizes scale the module's constants: batch_size 128 -> 4/5, "
                      'out_channels 16 -> 8/13, depth 16 -> 8/9, height 32 -> 8/11, width 32 -> '
                      '8/8',
                      'domain: batch_size, out_channels, depth, height, width drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 128], 'cpu_max': 5},
                     'out_channels': {'range': [1, 16], 'cpu_max': 13},
                     'depth': {'range': [1, 16], 'cpu_max': 9},
                     'height': {'range': [1, 32], 'cpu_max': 11},
                     'width': {'range': [1, 32], 'cpu_max': 8}},
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
               'bias_shape_0': ['bias_shape', 0],
               'bias_shape_1': ['bias_shape', 1],
               'bias_shape_2': ['bias_shape', 2],
               'bias_shape_3': ['bias_shape', 3]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'bias', 'state': 'bias', 'constant': None},
            {'name': 'conv_transpose_weight', 'state': 'conv_transpose.weight', 'constant': None},
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
           'bias_shape_0': 1,
           'bias_shape_1': 1,
           'bias_shape_2': 1,
           'bias_shape_3': 1,
           'reduced': 16},
  'bytes': 88167044,
  'flops': 5435817984},
 {'size': 'small',
  'dims': {'batch_size': 4,
           'in_channels': 3,
           'out_channels': 8,
           'depth': 8,
           'height': 8,
           'width': 8,
           'kernel_size': 3,
           'stride': 2,
           'padding': 1,
           'bias_shape_0': 1,
           'bias_shape_1': 1,
           'bias_shape_2': 1,
           'bias_shape_3': 1,
           'reduced': 12},
  'bytes': 81204,
  'flops': 2654208},
 {'size': 'odd',
  'dims': {'batch_size': 5,
           'in_channels': 3,
           'out_channels': 13,
           'depth': 9,
           'height': 11,
           'width': 8,
           'kernel_size': 3,
           'stride': 2,
           'padding': 1,
           'bias_shape_0': 1,
           'bias_shape_1': 1,
           'bias_shape_2': 1,
           'bias_shape_3': 1,
           'reduced': 13},
  'bytes': 158888,
  'flops': 8339760}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'in_channels': 3,
           'kernel_size': 3,
           'stride': 2,
           'padding': 1,
           'bias_shape_0': 1,
           'bias_shape_1': 1,
           'bias_shape_2': 1,
           'bias_shape_3': 1},
 'reduced': 'reduced',
 'sites': [{'factor': 12.0}, {'factor': 1.0, 'powers': {'out_channels': 1}}]}

PROBLEM = DrawnProblem('kb2_58_convtranspose3d_logsumexp_hardswish_subtract_clamp', SOURCE, SPEC, PLAN, DERIVED)


def kb2_58_convtranspose3d_logsumexp_hardswish_subtract_clamp(
    x: torch.Tensor,
    bias: torch.Tensor,
    conv_transpose_weight: torch.Tensor,
    conv_transpose_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, bias, conv_transpose_weight, conv_transpose_bias)


def eager(x, bias, conv_transpose_weight, conv_transpose_bias):
    return PROBLEM.eager(x, bias, conv_transpose_weight, conv_transpose_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
