"""kb2_82_conv2d_tanh_scaling_biasadd_max: KernelBench level 2, problem 82 (Conv2d_Tanh_Scaling_BiasAdd_Max).

Imported by `kernelgen import kernelbench` from level2/82_Conv2d_Tanh_Scaling_BiasAdd_Max.py.

At the problem's own size (batch_size=128, in_channels=8, out_channels=64, height=256, width=256,
  kernel_size=3, pool_kernel_size=4, reduced=72):
- x: ['batch_size', 'in_channels', 'height', 'width'] float32
- bias: ['out_channels', 1, 1] float32
- conv_weight: ['out_channels', 'in_channels', 3, 3] float32
- conv_bias: ['out_channels'] float32
CPU sizes: small, odd.
Note: runs a convolution
Note: CPU sizes scale the module's constants: batch_size 128 -> 8/9, out_channels 64 -> 16/19,
  height 256 -> 16/17, width 256 -> 16/21
Note: domain: batch_size, in_channels, out_channels, height, width drawn

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
    A model that performs a convolution, applies tanh, scaling, adds a bias term, and then max-pools.
    """
    def __init__(self, in_channels, out_channels, kernel_size, scaling_factor, bias_shape, pool_kernel_size):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scaling_factor = scaling_factor
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.max_pool = nn.MaxPool2d(pool_kernel_size)

    def forward(self, x):
        # Convolution
        x = self.conv(x)
        # Tanh activation
        x = torch.tanh(x)
        # Scaling
        x = x * self.scaling_factor
        # Bias addition
        x = x + self.bias
        # Max-pooling
        x = self.max_pool(x)
        return x

batch_size = 128
in_channels = 8
out_channels = 64
height, width = 256, 256
kernel_size = 3
scaling_factor = 2.0
bias_shape = (out_channels, 1, 1)
pool_kernel_size = 4

def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scaling_factor, bias_shape, pool_kernel_size]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten convolution, run on the meta device at
#   11 sizes); for a drawn size, the largest of 9 * in_channels
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset, leading
# - probed at the CPU sizes and at reach:in_channels=8 (the longest reduction)
# - a leading view slices height (second to last in a rank-3+ input)
# - dims: batch_size 1..128, in_channels 1..8, out_channels 1..64, height 6..256, width 6..256
#   (the least and the blocks each takes, tried on the meta device from the CPU size); kept:
#   kernel_size=3, pool_kernel_size=4
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_channels', 'height', 'width']},
            {'name': 'bias', 'shape': ['out_channels', 1, 1], 'layout_varies': False},
            {'name': 'conv_weight',
             'shape': ['out_channels', 'in_channels', 3, 3],
             'layout_varies': False},
            {'name': 'conv_bias', 'shape': ['out_channels'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 128,
                     'in_channels': 8,
                     'out_channels': 64,
                     'height': 256,
                     'width': 256,
                     'kernel_size': 3,
                     'pool_kernel_size': 4,
                     'reduced': 72},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 8,
                     'in_channels': 8,
                     'out_channels': 16,
                     'height': 16,
                     'width': 16,
                     'kernel_size': 3,
                     'pool_kernel_size': 4,
                     'reduced': 72},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 9,
                     'in_channels': 8,
                     'out_channels': 19,
                     'height': 17,
                     'width': 21,
                     'kernel_size': 3,
                     'pool_kernel_size': 4,
                     'reduced': 72},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 128,
                     'in_channels': 8,
                     'out_channels': 64,
                     'height': 256,
                     'width': 256,
                     'kernel_size': 3,
                     'pool_kernel_size': 4,
                     'reduced': 72},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'level2/82_Conv2d_Tanh_Scaling_BiasAdd_Max.py',
            'sha256': '1085dcf3a5845103c4dcdec8b8d3932ca48c729502fb101654bec085dae1dd8d',
            'level': 2,
            'problem': 82,
            'title': 'Conv2d_Tanh_Scaling_BiasAdd_Max',
            'convolution': True,
            'cpu': True,
            'notes': ['runs a convolution',
                      "CPU sizes scale the module's constants: batch_size 128 -> 8/9, "
                      'out_channels 64 -> 16/19, height 256 -> 16/17, width 256 -> 16/21',
                      'domain: batch_size, in_channels, out_channels, height, width drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 128], 'cpu_max': 9},
                     'in_channels': {'range': [1, 8]},
                     'out_channels': {'range': [1, 64], 'cpu_max': 19},
                     'height': {'range': [6, 256], 'cpu_max': 17},
                     'width': {'range': [6, 256], 'cpu_max': 21}},
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
               'height': ['height', None],
               'width': ['width', None],
               'kernel_size': ['kernel_size', None],
               'pool_kernel_size': ['pool_kernel_size', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'bias', 'state': 'bias', 'constant': None},
            {'name': 'conv_weight', 'state': 'conv.weight', 'constant': None},
            {'name': 'conv_bias', 'state': 'conv.bias', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 128,
           'in_channels': 8,
           'out_channels': 64,
           'height': 256,
           'width': 256,
           'kernel_size': 3,
           'pool_kernel_size': 4,
           'reduced': 72},
  'bytes': 398510592,
  'flops': 76106170368},
 {'size': 'small',
  'dims': {'batch_size': 8,
           'in_channels': 8,
           'out_channels': 16,
           'height': 16,
           'width': 16,
           'kernel_size': 3,
           'pool_kernel_size': 4,
           'reduced': 72},
  'bytes': 74880,
  'flops': 3612672},
 {'size': 'odd',
  'dims': {'batch_size': 9,
           'in_channels': 8,
           'out_channels': 19,
           'height': 17,
           'width': 21,
           'kernel_size': 3,
           'pool_kernel_size': 4,
           'reduced': 72},
  'bytes': 116648,
  'flops': 7017840}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'kernel_size': 3, 'pool_kernel_size': 4},
 'reduced': 'reduced',
 'sites': [{'factor': 9.0, 'powers': {'in_channels': 1}}]}

PROBLEM = DrawnProblem('kb2_82_conv2d_tanh_scaling_biasadd_max', SOURCE, SPEC, PLAN, DERIVED)


def kb2_82_conv2d_tanh_scaling_biasadd_max(
    x: torch.Tensor,
    bias: torch.Tensor,
    conv_weight: torch.Tensor,
    conv_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, bias, conv_weight, conv_bias)


def eager(x, bias, conv_weight, conv_bias):
    return PROBLEM.eager(x, bias, conv_weight, conv_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
