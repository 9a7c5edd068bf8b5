"""kb1_44_average_pooling_1d: KernelBench level 1, problem 44 (Average_Pooling_1D).

Imported by `kernelgen import kernelbench` from KernelBench/level1/44_Average_Pooling_1D.py.

At the problem's own size (batch_size=64, in_channels=128, input_length=65536, kernel_size=8,
  stride=1, padding=4, reduced=8):
- x: ['batch_size', 'in_channels', 'input_length'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 64 -> 16/17, in_channels 128 -> 16/19,
  input_length 65536 -> 32/33
Note: domain: batch_size, in_channels, input_length drawn

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
    Simple model that performs 1D Average Pooling.
    """
    def __init__(self, kernel_size: int, stride: int = 1, padding: int = 0):
        """
        Initializes the 1D Average Pooling layer.

        Args:
            kernel_size (int): Size of the pooling window.
            stride (int, optional): Stride of the pooling operation. Defaults to 1.
            padding (int, optional): Padding applied to the input tensor. Defaults to 0.
        """
        super(Model, self).__init__()
        self.avg_pool = nn.AvgPool1d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies 1D Average Pooling to the input tensor.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, in_channels, input_length).

        Returns:
            torch.Tensor: Output tensor with 1D Average Pooling applied, shape (batch_size, in_channels, output_length).
        """
        return self.avg_pool(x)

batch_size = 64
in_channels = 128
input_length = 65536
kernel_size = 8
stride = 1
padding = 4

def get_inputs():
    x = torch.rand(batch_size, in_channels, input_length)
    return [x]

def get_init_inputs():
    return [kernel_size, stride, padding]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten avg_pool2d, run on the meta device at 9
#   sizes); for a drawn size, the largest of 8
# - value families: normal, uniform, wide, small, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials; not large (small: 40 of 8448 entries off, |err|
#   1.58e+03 > atol 3e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset, leading
# - a leading view slices in_channels (second to last in a rank-3+ input)
# - dims: batch_size 1..64, in_channels 1..128, input_length 1..65536 (the least and the blocks
#   each takes, tried on the meta device from the CPU size); kept: kernel_size=8, stride=1,
#   padding=4
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_channels', 'input_length']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 64,
                     'in_channels': 128,
                     'input_length': 65536,
                     'kernel_size': 8,
                     'stride': 1,
                     'padding': 4,
                     'reduced': 8},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 16,
                     'in_channels': 16,
                     'input_length': 32,
                     'kernel_size': 8,
                     'stride': 1,
                     'padding': 4,
                     'reduced': 8},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 17,
                     'in_channels': 19,
                     'input_length': 33,
                     'kernel_size': 8,
                     'stride': 1,
                     'padding': 4,
                     'reduced': 8},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 64,
                     'in_channels': 128,
                     'input_length': 65536,
                     'kernel_size': 8,
                     'stride': 1,
                     'padding': 4,
                     'reduced': 8},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/44_Average_Pooling_1D.py',
            'sha256': '2c55c057fff2439d7bf30ad1cd33b9e72da6b9996cfc2f2bbde981e114a5b774',
            'level': 1,
            'problem': 44,
            'title': 'Average_Pooling_1D',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 64 -> 16/17, "
                      'in_channels 128 -> 16/19, input_length 65536 -> 32/33',
                      'domain: batch_size, in_channels, input_length drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 64], 'cpu_max': 17},
                     'in_channels': {'range': [1, 128], 'cpu_max': 19},
                     'input_length': {'range': [1, 65536], 'cpu_max': 33}},
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
            'heads': 'in_channels'}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'in_channels': ['in_channels', None],
               'input_length': ['input_length', None],
               'kernel_size': ['kernel_size', None],
               'stride': ['stride', None],
               'padding': ['padding', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 64,
           'in_channels': 128,
           'input_length': 65536,
           'kernel_size': 8,
           'stride': 1,
           'padding': 4,
           'reduced': 8},
  'bytes': 4295000064,
  'flops': 0},
 {'size': 'small',
  'dims': {'batch_size': 16,
           'in_channels': 16,
           'input_length': 32,
           'kernel_size': 8,
           'stride': 1,
           'padding': 4,
           'reduced': 8},
  'bytes': 66560,
  'flops': 0},
 {'size': 'odd',
  'dims': {'batch_size': 17,
           'in_channels': 19,
           'input_length': 33,
           'kernel_size': 8,
           'stride': 1,
           'padding': 4,
           'reduced': 8},
  'bytes': 86564,
  'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'kernel_size': 8, 'stride': 1, 'padding': 4},
 'reduced': 'reduced',
 'sites': [{'factor': 8.0}]}

PROBLEM = DrawnProblem('kb1_44_average_pooling_1d', SOURCE, SPEC, PLAN, DERIVED)


def kb1_44_average_pooling_1d(x: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(x)


def eager(x):
    return PROBLEM.eager(x)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
