"""kb2_57_conv2d_relu_hardswish: KernelBench level 2, problem 57 (Conv2d_ReLU_HardSwish).

Imported by `kernelgen import kernelbench` from level2/57_Conv2d_ReLU_HardSwish.py.

At the problem's own size (batch_size=128, in_channels=8, out_channels=64, height=128, width=128,
  kernel_size=3, reduced=72):
- x: ['batch_size', 'in_channels', 'height', 'width'] float32
- conv_weight: ['out_channels', 'in_channels', 3, 3] float32
- conv_bias: ['out_channels'] float32
CPU sizes: small, odd.
Note: runs a convolution
Note: CPU sizes scale the module's constants: batch_size 128 -> 8/9, out_channels 64 -> 8/11,
  height 128 -> 16/17, width 128 -> 16/19
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
    Simple model that performs a convolution, applies ReLU, and applies HardSwish activation.
    """
    def __init__(self, in_channels, out_channels, kernel_size):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = torch.relu(x)
        x = x * torch.clamp((x + 3) / 6, 0, 1)
        return x

batch_size = 128
in_channels = 8
out_channels = 64
height, width = 128, 128
kernel_size = 3

def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten convolution, run on the meta device at
#   11 sizes); for a drawn size, the largest of 9 * in_channels
# - value families: normal, uniform, wide, small, negative, sorted_up, sorted_down, constant,
#   ties, denormal, neg_inf, specials; not large (small: 251 of 12544 entries off, |err| 1.01e+04
#   > atol 6.2e-05 + rtol 1.3e-06*|ref|); spike (small: 4 of 12544 entries off, |err| 0.000163 >
#   atol 6.2e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset, leading
# - probed at the CPU sizes and at reach:in_channels=8 (the longest reduction)
# - a leading view slices height (second to last in a rank-3+ input)
# - dims: batch_size 1..128, in_channels 1..8, out_channels 1..64, height 3..128, width 3..128
#   (the least and the blocks each takes, tried on the meta device from the CPU size); kept:
#   kernel_size=3
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_channels', 'height', 'width']},
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
                     'height': 128,
                     'width': 128,
                     'kernel_size': 3,
                     'reduced': 72},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 8,
                     'in_channels': 8,
                     'out_channels': 8,
                     'height': 16,
                     'width': 16,
                     'kernel_size': 3,
                     'reduced': 72},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 9,
                     'in_channels': 8,
                     'out_channels': 11,
                     'height': 17,
                     'width': 19,
                     'kernel_size': 3,
                     'reduced': 72},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 128,
                     'in_channels': 8,
                     'out_channels': 64,
                     'height': 128,
                     'width': 128,
                     'kernel_size': 3,
                     'reduced': 72},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'level2/57_Conv2d_ReLU_HardSwish.py',
            'sha256': '6c3068e8639d0fce90e78d72027434237594eafe9e1c0919b56c30edeae9ff88',
            'level': 2,
            'problem': 57,
            'title': 'Conv2d_ReLU_HardSwish',
            'convolution': True,
            'cpu': True,
            'notes': ['runs a convolution',
                      "CPU sizes scale the module's constants: batch_size 128 -> 8/9, "
                      'out_channels 64 -> 8/11, height 128 -> 16/17, width 128 -> 16/19',
                      'domain: batch_size, in_channels, out_channels, height, width drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 128], 'cpu_max': 9},
                     'in_channels': {'range': [1, 8]},
                     'out_channels': {'range': [1, 64], 'cpu_max': 11},
                     'height': {'range': [3, 128], 'cpu_max': 17},
                     'width': {'range': [3, 128], 'cpu_max': 19}},
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
               'height': ['height', None],
               'width': ['width', None],
               'kernel_size': ['kernel_size', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'conv_weight', 'state': 'conv.weight', 'constant': None},
            {'name': 'conv_bias', 'state': 'conv.bias', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 128,
           'in_channels': 8,
           'out_channels': 64,
           'height': 128,
           'width': 128,
           'kernel_size': 3,
           'reduced': 72},
  'bytes': 587352320,
  'flops': 18728091648},
 {'size': 'small',
  'dims': {'batch_size': 8,
           'in_channels': 8,
           'out_channels': 8,
           'height': 16,
           'width': 16,
           'kernel_size': 3,
           'reduced': 72},
  'bytes': 118048,
  'flops': 1806336},
 {'size': 'odd',
  'dims': {'batch_size': 9,
           'in_channels': 8,
           'out_channels': 11,
           'height': 17,
           'width': 19,
           'kernel_size': 3,
           'reduced': 72},
  'bytes': 197216,
  'flops': 3635280}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'kernel_size': 3},
 'reduced': 'reduced',
 'sites': [{'factor': 9.0, 'powers': {'in_channels': 1}}]}

PROBLEM = DrawnProblem('kb2_57_conv2d_relu_hardswish', SOURCE, SPEC, PLAN, DERIVED)


def kb2_57_conv2d_relu_hardswish(
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
