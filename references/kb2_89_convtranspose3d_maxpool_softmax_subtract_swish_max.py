"""kb2_89_convtranspose3d_maxpool_softmax_subtract_swish_max: KernelBench level 2, problem 89 (ConvTranspose3d_MaxPool_Softmax_Subtract_Swish_Max).

Imported by `kernelgen import kernelbench` from level2/89_ConvTranspose3d_MaxPool_Softmax_Subtract_Swish_Max.py.

At the problem's own size (batch_size=128, in_channels=3, out_channels=16, depth=16, height=32,
  width=32, kernel_size=3, stride=2, padding=1, output_padding=1, pool_kernel_size=2,
  pool_stride=2, pool_padding=0, reduced=16):
- x: ['batch_size', 3, 'depth', 'height', 'width'] float32
- subtract: ['out_channels'] float32
- conv_transpose_weight: [3, 'out_channels', 3, 3, 3] float32
- conv_transpose_bias: ['out_channels'] float32
CPU sizes: small, odd.
Note: runs a convolution
Note: CPU sizes scale the module's constants: batch_size 128 -> 8/9, out_channels 16 -> 8/15, depth
  16 -> 8/11, height 32 -> 8/13, width 32 -> 8/8
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
    A model that performs a sequence of operations:
        - ConvTranspose3d
        - MaxPool3d
        - Softmax
        - Subtract
        - Swish
        - Max
    """
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, pool_kernel_size, pool_stride, pool_padding):
        super(Model, self).__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding)
        self.max_pool = nn.MaxPool3d(kernel_size=pool_kernel_size, stride=pool_stride, padding=pool_padding)
        self.subtract = nn.Parameter(torch.randn(out_channels)) # Assuming subtraction is element-wise across channels

    def forward(self, x):
        x = self.conv_transpose(x)
        x = self.max_pool(x)
        x = torch.softmax(x, dim=1) # Apply softmax across channels (dim=1)
        x = x - self.subtract.view(1, -1, 1, 1, 1) # Subtract across channels
        x = torch.sigmoid(x) * x # Swish activation
        x = torch.max(x, dim=1)[0] # Max pooling across channels
        return x

batch_size = 128
in_channels = 3
out_channels = 16
depth, height, width = 16, 32, 32
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
pool_kernel_size = 2
pool_stride = 2
pool_padding = 0

def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, pool_kernel_size, pool_stride, pool_padding]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten convolution, _softmax, run on the meta
#   device at 11 sizes); for a drawn size, the largest of 10 or out_channels
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset, leading
# - probed at the CPU sizes and at reach:out_channels=16 (the longest reduction)
# - a leading view slices height (second to last in a rank-3+ input)
# - dims: batch_size 1..128, out_channels 1..16, depth 1..16, height 1..32, width 1..32 (the
#   least and the blocks each takes, tried on the meta device from the CPU size); kept:
#   in_channels=3, kernel_size=3, stride=2, padding=1, output_padding=1, pool_kernel_size=2,
#   pool_stride=2, pool_padding=0
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 3, 'depth', 'height', 'width']},
            {'name': 'subtract', 'shape': ['out_channels'], 'layout_varies': False},
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
                     'output_padding': 1,
                     'pool_kernel_size': 2,
                     'pool_stride': 2,
                     'pool_padding': 0,
                     'reduced': 16},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 8,
                     'in_channels': 3,
                     'out_channels': 8,
                     'depth': 8,
                     'height': 8,
                     'width': 8,
                     'kernel_size': 3,
                     'stride': 2,
                     'padding': 1,
                     'output_padding': 1,
                     'pool_kernel_size': 2,
                     'pool_stride': 2,
                     'pool_padding': 0,
                     'reduced': 10},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 9,
                     'in_channels': 3,
                     'out_channels': 15,
                     'depth': 11,
                     'height': 13,
                     'width': 8,
                     'kernel_size': 3,
                     'stride': 2,
                     'padding': 1,
                     'output_padding': 1,
                     'pool_kernel_size': 2,
                     'pool_stride': 2,
                     'pool_padding': 0,
                     'reduced': 15},
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
                     'output_padding': 1,
                     'pool_kernel_size': 2,
                     'pool_stride': 2,
                     'pool_padding': 0,
                     'reduced': 16},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'level2/89_ConvTranspose3d_MaxPool_Softmax_Subtract_Swish_Max.py',
            'sha256': '300030609984e750550fcf6b263c5fe8bba73389cb644cd48085c30be109b0df',
            'level': 2,
            'problem': 89,
            'title': 'ConvTranspose3d_MaxPool_Softmax_Subtract_Swish_Max',
            'convolution': True,
            'cpu': True,
            'notes': ['runs a convolution',
                      "CPU sizes scale the module's constants: batch_size 128 -> 8/9, "
                      'out_channels 16 -> 8/15, depth 16 -> 8/11, height 32 -> 8/13, width 32 -> '
                      '8/8',
                      'domain: batch_size, out_channels, depth, height, width drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 128], 'cpu_max': 9},
                     'out_channels': {'range': [1, 16], 'cpu_max': 15},
                     'depth': {'range': [1, 16], 'cpu_max': 11},
                     'height': {'range': [1, 32], 'cpu_max': 13},
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
               'output_padding': ['output_padding', None],
               'pool_kernel_size': ['pool_kernel_size', None],
               'pool_stride': ['pool_stride', None],
               'pool_padding': ['pool_padding', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'subtract', 'state': 'subtract', 'constant': None},
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
           'output_padding': 1,
           'pool_kernel_size': 2,
           'pool_stride': 2,
           'pool_padding': 0,
           'reduced': 16},
  'bytes': 33559744,
  'flops': 5435817984},
 {'size': 'small',
  'dims': {'batch_size': 8,
           'in_channels': 3,
           'out_channels': 8,
           'depth': 8,
           'height': 8,
           'width': 8,
           'kernel_size': 3,
           'stride': 2,
           'padding': 1,
           'output_padding': 1,
           'pool_kernel_size': 2,
           'pool_stride': 2,
           'pool_padding': 0,
           'reduced': 10},
  'bytes': 68192,
  'flops': 5308416},
 {'size': 'odd',
  'dims': {'batch_size': 9,
           'in_channels': 3,
           'out_channels': 15,
           'depth': 11,
           'height': 13,
           'width': 8,
           'kernel_size': 3,
           'stride': 2,
           'padding': 1,
           'output_padding': 1,
           'pool_kernel_size': 2,
           'pool_stride': 2,
           'pool_padding': 0,
           'reduced': 15},
  'bytes': 169716,
  'flops': 25019280}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'in_channels': 3,
           'kernel_size': 3,
           'stride': 2,
           'padding': 1,
           'output_padding': 1,
           'pool_kernel_size': 2,
           'pool_stride': 2,
           'pool_padding': 0},
 'reduced': 'reduced',
 'sites': [{'factor': 10.0}, {'factor': 1.0, 'powers': {'out_channels': 1}}]}

PROBLEM = DrawnProblem('kb2_89_convtranspose3d_maxpool_softmax_subtract_swish_max', SOURCE, SPEC, PLAN, DERIVED)


def kb2_89_convtranspose3d_maxpool_softmax_subtract_swish_max(
    x: torch.Tensor,
    subtract: torch.Tensor,
    conv_transpose_weight: torch.Tensor,
    conv_transpose_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, subtract, conv_transpose_weight, conv_transpose_bias)


def eager(x, subtract, conv_transpose_weight, conv_transpose_bias):
    return PROBLEM.eager(x, subtract, conv_transpose_weight, conv_transpose_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
