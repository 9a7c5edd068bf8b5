"""kb2_6_conv3d_softmax_maxpool_maxpool: KernelBench level 2, problem 6 (Conv3d_Softmax_MaxPool_MaxPool).

Imported by `kernelgen import kernelbench` from level2/6_Conv3d_Softmax_MaxPool_MaxPool.py.

At the problem's own size (batch_size=128, in_channels=3, out_channels=16, depth=16, height=32,
  width=32, kernel_size=3, pool_kernel_size=2, reduced=81):
- x: ['batch_size', 3, 'depth', 'height', 'width'] float32
- conv_weight: ['out_channels', 3, 3, 3, 3] float32
- conv_bias: ['out_channels'] float32
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
    Model that performs a 3D convolution, applies Softmax, and performs two max pooling operations.
    """
    def __init__(self, in_channels, out_channels, kernel_size, pool_kernel_size):
        super(Model, self).__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.pool1 = nn.MaxPool3d(pool_kernel_size)
        self.pool2 = nn.MaxPool3d(pool_kernel_size)

    def forward(self, x):
        """
        Args:
            x: Input tensor of shape (batch_size, in_channels, depth, height, width)
        Returns:
            Output tensor of shape (batch_size, out_channels, depth', height', width') where depth', height', width' are the dimensions after pooling.
        """
        x = self.conv(x)
        x = torch.softmax(x, dim=1)
        x = self.pool1(x)
        x = self.pool2(x)
        return x

batch_size = 128
in_channels = 3
out_channels = 16
depth, height, width = 16, 32, 32
kernel_size = 3
pool_kernel_size = 2

def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, pool_kernel_size]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten convolution, _softmax, run on the meta
#   device at 11 sizes); for a drawn size, the largest of 81 or out_channels
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset, leading
# - probed at the CPU sizes and at reach:out_channels=16 (the longest reduction)
# - a leading view slices height (second to last in a rank-3+ input)
# - dims: batch_size 1..128, out_channels 1..16, depth 6..16, height 6..32, width 6..32 (the
#   least and the blocks each takes, tried on the meta device from the CPU size); kept:
#   in_channels=3, kernel_size=3, pool_kernel_size=2
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 3, 'depth', 'height', 'width']},
            {'name': 'conv_weight', 'shape': ['out_channels', 3, 3, 3, 3], 'layout_varies': False},
            {'name': 'conv_bias', 'shape': ['out_channels'], 'layout_varies': False}],
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
                     'pool_kernel_size': 2,
                     'reduced': 81},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 8,
                     'in_channels': 3,
                     'out_channels': 8,
                     'depth': 8,
                     'height': 8,
                     'width': 16,
                     'kernel_size': 3,
                     'pool_kernel_size': 2,
                     'reduced': 81},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 9,
                     'in_channels': 3,
                     'out_channels': 15,
                     'depth': 11,
                     'height': 13,
                     'width': 16,
                     'kernel_size': 3,
                     'pool_kernel_size': 2,
                     'reduced': 81},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 128,
                     'in_channels': 3,
                     'out_channels': 16,
                     'depth': 16,
                     'height': 32,
                     'width': 32,
                     'kernel_size': 3,
                     'pool_kernel_size': 2,
                     'reduced': 81},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'level2/6_Conv3d_Softmax_MaxPool_MaxPool.py',
            'sha256': '55322b483d9bf27e0fefcdfd0e25f53172c194da6b47154d40bd39f781c60a46',
            'level': 2,
            'problem': 6,
            'title': 'Conv3d_Softmax_MaxPool_MaxPool',
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
                     'depth': {'range': [6, 16], 'cpu_max': 11},
                     'height': {'range': [6, 32], 'cpu_max': 13},
                     'width': {'range': [6, 32], 'cpu_max': 16}},
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
               'pool_kernel_size': ['pool_kernel_size', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'conv_weight', 'state': 'conv.weight', 'constant': None},
            {'name': 'conv_bias', 'state': 'conv.bias', 'constant': None}],
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
           'pool_kernel_size': 2,
           'reduced': 81},
  'bytes': 26375296,
  'flops': 4180377600},
 {'size': 'small',
  'dims': {'batch_size': 8,
           'in_channels': 3,
           'out_channels': 8,
           'depth': 8,
           'height': 8,
           'width': 16,
           'kernel_size': 3,
           'pool_kernel_size': 2,
           'reduced': 81},
  'bytes': 101696,
  'flops': 5225472},
 {'size': 'odd',
  'dims': {'batch_size': 9,
           'in_channels': 3,
           'out_channels': 15,
           'depth': 11,
           'height': 13,
           'width': 16,
           'kernel_size': 3,
           'pool_kernel_size': 2,
           'reduced': 81},
  'bytes': 258504,
  'flops': 30311820}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'in_channels': 3, 'kernel_size': 3, 'pool_kernel_size': 2},
 'reduced': 'reduced',
 'sites': [{'factor': 81.0}, {'factor': 1.0, 'powers': {'out_channels': 1}}]}

PROBLEM = DrawnProblem('kb2_6_conv3d_softmax_maxpool_maxpool', SOURCE, SPEC, PLAN, DERIVED)


def kb2_6_conv3d_softmax_maxpool_maxpool(
    x: torch.Tensor,
    conv_weight: torch.Tensor,
    conv_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, conv_weight, conv_bias)


def eager(x, conv_weight, conv_bias):
    return PROBLEM.eager(x, conv_weight, conv_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
