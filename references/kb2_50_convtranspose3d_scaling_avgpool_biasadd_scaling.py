"""kb2_50_convtranspose3d_scaling_avgpool_biasadd_scaling: KernelBench level 2, problem 50 (ConvTranspose3d_Scaling_AvgPool_BiasAdd_Scaling).

Imported by `kernelgen import kernelbench` from level2/50_ConvTranspose3d_Scaling_AvgPool_BiasAdd_Scaling.py.

At the problem's own size (batch_size=128, in_channels=3, out_channels=16, depth=16, height=32,
  width=32, kernel_size=3, stride=2, padding=1, reduced=11):
- x: ['batch_size', 3, 'depth', 'height', 'width'] float32
- scale1: [] float32
- bias: ['out_channels', 1, 1, 1] float32
- scale2: [] float32
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
    Model that performs a 3D transposed convolution, scaling, average pooling, bias addition, and scaling.
    """
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, scale1, scale2, bias_shape):
        super(Model, self).__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.scale1 = nn.Parameter(torch.tensor(scale1))
        self.avg_pool = nn.AvgPool3d(kernel_size=2)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.scale2 = nn.Parameter(torch.tensor(scale2))

    def forward(self, x):
        x = self.conv_transpose(x)
        x = x * self.scale1
        x = self.avg_pool(x)
        x = x + self.bias
        x = x * self.scale2
        return x

batch_size = 128
in_channels = 3
out_channels = 16
depth, height, width = 16, 32, 32
kernel_size = 3
stride = 2
padding = 1
scale1 = 0.5
scale2 = 1.0
bias_shape = (out_channels, 1, 1, 1)

def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, scale1, scale2, bias_shape]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten convolution, avg_pool3d, run on the meta
#   device at 11 sizes); for a drawn size, the largest of 12 or 8
# - value families: normal, uniform, wide, small, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials; not large (small: 330 of 10976 entries off,
#   |err| 976 > atol 3.6e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset, leading
# - a leading view slices height (second to last in a rank-3+ input)
# - dims: batch_size 1..128, out_channels 1..16, depth 2..16, height 2..32, width 2..32 (the
#   least and the blocks each takes, tried on the meta device from the CPU size); kept:
#   in_channels=3, kernel_size=3, stride=2, padding=1
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 3, 'depth', 'height', 'width']},
            {'name': 'scale1', 'shape': [], 'layout_varies': False},
            {'name': 'bias', 'shape': ['out_channels', 1, 1, 1], 'layout_varies': False},
            {'name': 'scale2', 'shape': [], 'layout_varies': False},
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
                     'reduced': 11},
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
                     'reduced': 12},
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
                     'reduced': 11},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'level2/50_ConvTranspose3d_Scaling_AvgPool_BiasAdd_Scaling.py',
            'sha256': 'c094d9151eed193c99c1854706203e33d32c7a0e536abf04c81790f873763765',
            'level': 2,
            'problem': 50,
            'title': 'ConvTranspose3d_Scaling_AvgPool_BiasAdd_Scaling',
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
                     'depth': {'range': [2, 16], 'cpu_max': 9},
                     'height': {'range': [2, 32], 'cpu_max': 11},
                     'width': {'range': [2, 32], 'cpu_max': 8}},
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
               'in_channels': ['in_channels', None],
               'out_channels': ['out_channels', None],
               'depth': ['depth', None],
               'height': ['height', None],
               'width': ['width', None],
               'kernel_size': ['kernel_size', None],
               'stride': ['stride', None],
               'padding': ['padding', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'scale1', 'state': 'scale1', 'constant': 0.5},
            {'name': 'bias', 'state': 'bias', 'constant': None},
            {'name': 'scale2', 'state': 'scale2', 'constant': 1.0},
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
           'reduced': 11},
  'bytes': 143258824,
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
           'reduced': 12},
  'bytes': 71144,
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
           'reduced': 12},
  'bytes': 197444,
  'flops': 8339760}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'in_channels': 3, 'kernel_size': 3, 'stride': 2, 'padding': 1},
 'reduced': 'reduced',
 'sites': [{'factor': 12.0}, {'factor': 8.0}]}

PROBLEM = DrawnProblem('kb2_50_convtranspose3d_scaling_avgpool_biasadd_scaling', SOURCE, SPEC, PLAN, DERIVED)


def kb2_50_convtranspose3d_scaling_avgpool_biasadd_scaling(
    x: torch.Tensor,
    scale1: torch.Tensor,
    bias: torch.Tensor,
    scale2: torch.Tensor,
    conv_transpose_weight: torch.Tensor,
    conv_transpose_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, scale1, bias, scale2, conv_transpose_weight, conv_transpose_bias)


def eager(x, scale1, bias, scale2, conv_transpose_weight, conv_transpose_bias):
    return PROBLEM.eager(x, scale1, bias, scale2, conv_transpose_weight, conv_transpose_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
