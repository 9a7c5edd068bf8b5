"""kb1_35_groupnorm: KernelBench level 1, problem 35 (GroupNorm_).

Imported by `kernelgen import kernelbench` from KernelBench/level1/35_GroupNorm_.py.

At the problem's own size (batch_size=112, features=64, num_groups=8, dim1=512, dim2=512,
  reduced=2097152):
- x: ['batch_size', 'features', 'dim1', 'dim2'] float32
- gn_weight: ['features'] float32
- gn_bias: ['features'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 112 -> 14/15, features 64 -> 8/8, dim1 512
  -> 8/9, dim2 512 -> 16/17
Note: domain: batch_size, features, dim1, dim2 drawn

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
    Simple model that performs Group Normalization.
    """
    def __init__(self, num_features: int, num_groups: int):
        """
        Initializes the GroupNorm layer.

        Args:
            num_features (int): Number of features in the input tensor.
            num_groups (int): Number of groups to divide the channels into.
        """
        super(Model, self).__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies Group Normalization to the input tensor.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, num_features, *).

        Returns:
            torch.Tensor: Output tensor with Group Normalization applied, same shape as input.
        """
        return self.gn(x)

batch_size = 112  # scaled up
features = 64
num_groups = 8
dim1 = 512
dim2 = 512

def get_inputs():
    x = torch.rand(batch_size, features, dim1, dim2)
    return [x]

def get_init_inputs():
    return [features, num_groups] # num_features'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten native_group_norm, run on the meta
#   device at 10 sizes); for a drawn size, the largest of 0.125 * features * dim1 * dim2
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset, leading
# - a leading view slices dim1 (second to last in a rank-3+ input)
# - dims: batch_size 2..112, features 8..64 in blocks of 8, dim1 1..512, dim2 1..512 (the least
#   and the blocks each takes, tried on the meta device from the CPU size); kept: num_groups=8
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'features', 'dim1', 'dim2']},
            {'name': 'gn_weight', 'shape': ['features'], 'layout_varies': False},
            {'name': 'gn_bias', 'shape': ['features'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 112,
                     'features': 64,
                     'num_groups': 8,
                     'dim1': 512,
                     'dim2': 512,
                     'reduced': 2097152},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 14,
                     'features': 8,
                     'num_groups': 8,
                     'dim1': 8,
                     'dim2': 16,
                     'reduced': 128},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 15,
                     'features': 8,
                     'num_groups': 8,
                     'dim1': 9,
                     'dim2': 17,
                     'reduced': 153},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 112,
                     'features': 64,
                     'num_groups': 8,
                     'dim1': 512,
                     'dim2': 512,
                     'reduced': 2097152},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/35_GroupNorm_.py',
            'sha256': 'e4462f85b3eaadd05bdce8655305f5bcddc49dd31ef0a3bba1b85a1cbb2d19bb',
            'level': 1,
            'problem': 35,
            'title': 'GroupNorm_',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 112 -> 14/15, features "
                      '64 -> 8/8, dim1 512 -> 8/9, dim2 512 -> 16/17',
                      'domain: batch_size, features, dim1, dim2 drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [2, 112], 'cpu_max': 15},
                     'features': {'range': [8, 64], 'cpu_max': 8, 'multiple_of': 8},
                     'dim1': {'range': [1, 512], 'cpu_max': 9},
                     'dim2': {'range': [1, 512], 'cpu_max': 17}},
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
            'heads': 'dim1'}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'features': ['features', None],
               'num_groups': ['num_groups', None],
               'dim1': ['dim1', None],
               'dim2': ['dim2', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'gn_weight', 'state': 'gn.weight', 'constant': 1.0},
            {'name': 'gn_bias', 'state': 'gn.bias', 'constant': 0.0}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 112,
           'features': 64,
           'num_groups': 8,
           'dim1': 512,
           'dim2': 512,
           'reduced': 2097152},
  'bytes': 15032386048,
  'flops': 0},
 {'size': 'small',
  'dims': {'batch_size': 14,
           'features': 8,
           'num_groups': 8,
           'dim1': 8,
           'dim2': 16,
           'reduced': 128},
  'bytes': 114752,
  'flops': 0},
 {'size': 'odd',
  'dims': {'batch_size': 15,
           'features': 8,
           'num_groups': 8,
           'dim1': 9,
           'dim2': 17,
           'reduced': 153},
  'bytes': 146944,
  'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'num_groups': 8},
 'reduced': 'reduced',
 'sites': [{'factor': 0.125, 'powers': {'features': 1, 'dim1': 1, 'dim2': 1}}]}

PROBLEM = DrawnProblem('kb1_35_groupnorm', SOURCE, SPEC, PLAN, DERIVED)


def kb1_35_groupnorm(
    x: torch.Tensor,
    gn_weight: torch.Tensor,
    gn_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, gn_weight, gn_bias)


def eager(x, gn_weight, gn_bias):
    return PROBLEM.eager(x, gn_weight, gn_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
