"""kb1_43_max_pooling_3d: KernelBench level 1, problem 43 (Max_Pooling_3D).

Imported by `kernelgen import kernelbench` from KernelBench/level1/43_Max_Pooling_3D.py.

At the problem's own size (batch_size=16, channels=32, dim1=128, dim2=128, dim3=128, kernel_size=3,
  stride=2, padding=1, dilation=3):
- x: ['batch_size', 'channels', 'dim1', 'dim2', 'dim3'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 16 -> 4/5, channels 32 -> 8/9, dim1 128 ->
  8/11, dim2 128 -> 8/13, dim3 128 -> 8/8
Note: domain: batch_size, channels, dim1, dim2, dim3 drawn

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
    Simple model that performs Max Pooling 3D.
    """
    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0, dilation: int = 1, return_indices: bool = False, ceil_mode: bool = False):
        """
        Initializes the Max Pooling 3D layer.

        Args:
            kernel_size (int): Size of the kernel for the max pooling operation.
            stride (int, optional): Stride of the pooling operation. Defaults to None, which means stride is equal to kernel_size.
            padding (int, optional): Padding applied to the input tensor. Defaults to 0.
            dilation (int, optional): Spacing between kernel elements. Defaults to 1.
            return_indices (bool, optional): Whether to return indices of the maximum values. Defaults to False.
            ceil_mode (bool, optional): When True, the output size is ceil(input_size / stride) instead of floor. Defaults to False.
        """
        super(Model, self).__init__()
        self.maxpool = nn.MaxPool3d(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation, return_indices=return_indices, ceil_mode=ceil_mode)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies Max Pooling 3D to the input tensor.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, channels, dim1, dim2, dim3).

        Returns:
            torch.Tensor: Output tensor with Max Pooling 3D applied.
        """
        return self.maxpool(x)

batch_size = 16
channels = 32
dim1 = 128
dim2 = 128
dim3 = 128
kernel_size = 3
stride = 2
padding = 1
dilation = 3

def get_inputs():
    x = torch.rand(batch_size, channels, dim1, dim2, dim3)
    return [x]

def get_init_inputs():
    return [kernel_size, stride, padding, dilation]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset, leading
# - a leading view slices dim2 (second to last in a rank-3+ input)
# - dims: batch_size 1..16, channels 1..32, dim1 5..128, dim2 5..128, dim3 5..128 (the least and
#   the blocks each takes, tried on the meta device from the CPU size); kept: kernel_size=3,
#   stride=2, padding=1, dilation=3
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'channels', 'dim1', 'dim2', 'dim3']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 16,
                     'channels': 32,
                     'dim1': 128,
                     'dim2': 128,
                     'dim3': 128,
                     'kernel_size': 3,
                     'stride': 2,
                     'padding': 1,
                     'dilation': 3},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 4,
                     'channels': 8,
                     'dim1': 8,
                     'dim2': 8,
                     'dim3': 8,
                     'kernel_size': 3,
                     'stride': 2,
                     'padding': 1,
                     'dilation': 3},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 5,
                     'channels': 9,
                     'dim1': 11,
                     'dim2': 13,
                     'dim3': 8,
                     'kernel_size': 3,
                     'stride': 2,
                     'padding': 1,
                     'dilation': 3},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 16,
                     'channels': 32,
                     'dim1': 128,
                     'dim2': 128,
                     'dim3': 128,
                     'kernel_size': 3,
                     'stride': 2,
                     'padding': 1,
                     'dilation': 3},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/43_Max_Pooling_3D.py',
            'sha256': 'c684de6a8afdb3e555952e692f07744531394f2ccd8ea5f34b68793f7f71b709',
            'level': 1,
            'problem': 43,
            'title': 'Max_Pooling_3D',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 16 -> 4/5, channels 32 "
                      '-> 8/9, dim1 128 -> 8/11, dim2 128 -> 8/13, dim3 128 -> 8/8',
                      'domain: batch_size, channels, dim1, dim2, dim3 drawn']},
 'domain': {'dims': {'batch_size': {'range': [1, 16], 'cpu_max': 5},
                     'channels': {'range': [1, 32], 'cpu_max': 9},
                     'dim1': {'range': [5, 128], 'cpu_max': 11},
                     'dim2': {'range': [5, 128], 'cpu_max': 13},
                     'dim3': {'range': [5, 128], 'cpu_max': 8}},
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
            'heads': 'dim2'}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'channels': ['channels', None],
               'dim1': ['dim1', None],
               'dim2': ['dim2', None],
               'dim3': ['dim3', None],
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
  'dims': {'batch_size': 16,
           'channels': 32,
           'dim1': 128,
           'dim2': 128,
           'dim3': 128,
           'kernel_size': 3,
           'stride': 2,
           'padding': 1,
           'dilation': 3},
  'bytes': 4783063040,
  'flops': 0},
 {'size': 'small',
  'dims': {'batch_size': 4,
           'channels': 8,
           'dim1': 8,
           'dim2': 8,
           'dim3': 8,
           'kernel_size': 3,
           'stride': 2,
           'padding': 1,
           'dilation': 3},
  'bytes': 66560,
  'flops': 0},
 {'size': 'odd',
  'dims': {'batch_size': 5,
           'channels': 9,
           'dim1': 11,
           'dim2': 13,
           'dim3': 8,
           'kernel_size': 3,
           'stride': 2,
           'padding': 1,
           'dilation': 3},
  'bytes': 213120,
  'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'kernel_size': 3, 'stride': 2, 'padding': 1, 'dilation': 3}}

PROBLEM = DrawnProblem('kb1_43_max_pooling_3d', SOURCE, SPEC, PLAN, DERIVED)


def kb1_43_max_pooling_3d(x: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(x)


def eager(x):
    return PROBLEM.eager(x)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
