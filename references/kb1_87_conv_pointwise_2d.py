"""kb1_87_conv_pointwise_2d: KernelBench level 1, problem 87 (conv_pointwise_2D).

Imported by `kernelgen import kernelbench` from KernelBench/level1/87_conv_pointwise_2D.py.

At the problem's own size (batch_size=16, in_channels=64, out_channels=128, width=1024,
  height=1024):
- x: ['batch_size', 'in_channels', 'height', 'width'] float32
- conv1d_weight: ['out_channels', 'in_channels', 1, 1] float32
CPU sizes: small, odd.
Note: runs a convolution
Note: CPU sizes scale the module's constants: batch_size 16 -> 8/9, in_channels 64 -> 8/11,
  out_channels 128 -> 8/13, width 1024 -> 8/15, height 1024 -> 16/17
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
    Performs a pointwise 2D convolution operation.

    Args:
        in_channels (int): Number of channels in the input tensor.
        out_channels (int): Number of channels produced by the convolution.
        bias (bool, optional): If `True`, adds a learnable bias to the output. Defaults to `False`.
    """
    def __init__(self, in_channels: int, out_channels: int, bias: bool = False):
        super(Model, self).__init__()
        self.conv1d = nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0, bias=bias)
        
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Performs the pointwise 2D convolution.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, in_channels, height, width).

        Returns:
            torch.Tensor: Output tensor of shape (batch_size, out_channels, height, width).
        """
        return self.conv1d(x)

# Test code
batch_size = 16
in_channels = 64
out_channels = 128
width = 1024
height = 1024

def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]

def get_init_inputs():
    return [in_channels, out_channels]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: in_channels, the terms each output sums (aten convolution, run on the meta device
#   at 11 sizes)
# - value families: normal, uniform, wide, small, negative, sorted_up, sorted_down, constant,
#   ties, denormal, neg_inf, specials; not large (small: 47 of 8192 entries off, |err| 600 > atol
#   3e-05 + rtol 1.3e-06*|ref|); spike (small: 1 of 8192 entries off, |err| 4.99e-05 > atol 3e-05
#   + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset, leading
# - probed at the CPU sizes and at reach:in_channels=64 (the longest reduction)
# - a leading view slices height (second to last in a rank-3+ input)
# - dims: batch_size 1..16, in_channels 1..64, out_channels 1..128, width 1..1024, height 1..1024
#   (the least and the blocks each takes, tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_channels', 'height', 'width']},
            {'name': 'conv1d_weight',
             'shape': ['out_channels', 'in_channels', 1, 1],
             'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 16,
                     'in_channels': 64,
                     'out_channels': 128,
                     'width': 1024,
                     'height': 1024},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 8,
                     'in_channels': 8,
                     'out_channels': 8,
                     'width': 8,
                     'height': 16},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 9,
                     'in_channels': 11,
                     'out_channels': 13,
                     'width': 15,
                     'height': 17},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 16,
                     'in_channels': 64,
                     'out_channels': 128,
                     'width': 1024,
                     'height': 1024},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/87_conv_pointwise_2D.py',
            'sha256': '5608fbde926998ce10992790b9c1b09a15481cbd005472b0ad54d70db41eb1d8',
            'level': 1,
            'problem': 87,
            'title': 'conv_pointwise_2D',
            'convolution': True,
            'cpu': True,
            'notes': ['runs a convolution',
                      "CPU sizes scale the module's constants: batch_size 16 -> 8/9, in_channels "
                      '64 -> 8/11, out_channels 128 -> 8/13, width 1024 -> 8/15, height 1024 -> '
                      '16/17',
                      'domain: batch_size, in_channels, out_channels, width, height drawn']},
 'reduction': 'in_channels',
 'domain': {'dims': {'batch_size': {'range': [1, 16], 'cpu_max': 9},
                     'in_channels': {'range': [1, 64], 'cpu_max': 11},
                     'out_channels': {'range': [1, 128], 'cpu_max': 13},
                     'width': {'range': [1, 1024], 'cpu_max': 15},
                     'height': {'range': [1, 1024], 'cpu_max': 17}},
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
            'heads': 'height'}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'in_channels': ['in_channels', None],
               'out_channels': ['out_channels', None],
               'width': ['width', None],
               'height': ['height', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'conv1d_weight', 'state': 'conv1d.weight', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 16,
           'in_channels': 64,
           'out_channels': 128,
           'width': 1024,
           'height': 1024},
  'bytes': 12884934656,
  'flops': 274877906944},
 {'size': 'small',
  'dims': {'batch_size': 8, 'in_channels': 8, 'out_channels': 8, 'width': 8, 'height': 16},
  'bytes': 65792,
  'flops': 131072},
 {'size': 'odd',
  'dims': {'batch_size': 9, 'in_channels': 11, 'out_channels': 13, 'width': 15, 'height': 17},
  'bytes': 220892,
  'flops': 656370}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb1_87_conv_pointwise_2d', SOURCE, SPEC, PLAN, DERIVED)


def kb1_87_conv_pointwise_2d(x: torch.Tensor, conv1d_weight: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(x, conv1d_weight)


def eager(x, conv1d_weight):
    return PROBLEM.eager(x, conv1d_weight)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
