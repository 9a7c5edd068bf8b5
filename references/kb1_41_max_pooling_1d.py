"""kb1_41_max_pooling_1d: KernelBench level 1, problem 41 (Max_Pooling_1D).

Imported by `kernelgen import kernelbench` from KernelBench/level1/41_Max_Pooling_1D.py.

At the problem's own size (batch_size=64, features=192, sequence_length=65536, kernel_size=8,
  stride=1, padding=4, dilation=3):
- x: ['batch_size', 'features', 'sequence_length'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 64 -> 16/17, features 192 -> 24/25,
  sequence_length 65536 -> 32/33
Note: domain: batch_size, features, sequence_length drawn

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
    Simple model that performs Max Pooling 1D.
    """
    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0, dilation: int = 1, return_indices: bool = False):
        """
        Initializes the Max Pooling 1D layer.

        Args:
            kernel_size (int): Size of the window to take a max over.
            stride (int, optional): Stride of the window. Defaults to None (same as kernel_size).
            padding (int, optional): Implicit zero padding to be added on both sides. Defaults to 0.
            dilation (int, optional): Spacing between kernel elements. Defaults to 1.
            return_indices (bool, optional): Whether to return the indices of the maximum values. Defaults to False.
        """
        super(Model, self).__init__()
        self.maxpool = nn.MaxPool1d(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation, return_indices=return_indices)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies Max Pooling 1D to the input tensor.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, num_features, sequence_length).

        Returns:
            torch.Tensor: Output tensor with Max Pooling 1D applied, shape (batch_size, num_features, output_sequence_length).
        """
        return self.maxpool(x)

batch_size = 64
features = 192
sequence_length = 65536

kernel_size = 8
stride      = 1
padding     = 4
dilation    = 3            

return_indices = False

def get_inputs():
    x = torch.rand(batch_size, features, sequence_length)
    return [x]

def get_init_inputs():
    return [kernel_size, stride, padding, dilation, return_indices]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset, leading
# - a leading view slices features (second to last in a rank-3+ input)
# - dims: batch_size 1..64, features 1..192, sequence_length 16..65536 (the least and the blocks
#   each takes, tried on the meta device from the CPU size); kept: kernel_size=8, stride=1,
#   padding=4, dilation=3
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'features', 'sequence_length']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 64,
                     'features': 192,
                     'sequence_length': 65536,
                     'kernel_size': 8,
                     'stride': 1,
                     'padding': 4,
                     'dilation': 3},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 16,
                     'features': 24,
                     'sequence_length': 32,
                     'kernel_size': 8,
                     'stride': 1,
                     'padding': 4,
                     'dilation': 3},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 17,
                     'features': 25,
                     'sequence_length': 33,
                     'kernel_size': 8,
                     'stride': 1,
                     'padding': 4,
                     'dilation': 3},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 64,
                     'features': 192,
                     'sequence_length': 65536,
                     'kernel_size': 8,
                     'stride': 1,
                     'padding': 4,
                     'dilation': 3},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/41_Max_Pooling_1D.py',
            'sha256': '65bbc7b4b8c999990dacd9be04823886fecfec981a5d7484ddcf53302b04584d',
            'level': 1,
            'problem': 41,
            'title': 'Max_Pooling_1D',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 64 -> 16/17, features "
                      '192 -> 24/25, sequence_length 65536 -> 32/33',
                      'domain: batch_size, features, sequence_length drawn']},
 'domain': {'dims': {'batch_size': {'range': [1, 64], 'cpu_max': 17},
                     'features': {'range': [1, 192], 'cpu_max': 25},
                     'sequence_length': {'range': [16, 65536], 'cpu_max': 33}},
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
            'heads': 'features'}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'features': ['features', None],
               'sequence_length': ['sequence_length', None],
               'kernel_size': ['kernel_size', None],
               'stride': ['stride', None],
               'padding': ['padding', None],
               'dilation': ['dilation', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 64,
           'features': 192,
           'sequence_length': 65536,
           'kernel_size': 8,
           'stride': 1,
           'padding': 4,
           'dilation': 3},
  'bytes': 6441811968,
  'flops': 0},
 {'size': 'small',
  'dims': {'batch_size': 16,
           'features': 24,
           'sequence_length': 32,
           'kernel_size': 8,
           'stride': 1,
           'padding': 4,
           'dilation': 3},
  'bytes': 78336,
  'flops': 0},
 {'size': 'odd',
  'dims': {'batch_size': 17,
           'features': 25,
           'sequence_length': 33,
           'kernel_size': 8,
           'stride': 1,
           'padding': 4,
           'dilation': 3},
  'bytes': 90100,
  'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'kernel_size': 8, 'stride': 1, 'padding': 4, 'dilation': 3}}

PROBLEM = DrawnProblem('kb1_41_max_pooling_1d', SOURCE, SPEC, PLAN, DERIVED)


def kb1_41_max_pooling_1d(x: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(x)


def eager(x):
    return PROBLEM.eager(x)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
