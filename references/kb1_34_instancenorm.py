"""kb1_34_instancenorm: KernelBench level 1, problem 34 (InstanceNorm).

Imported by `kernelgen import kernelbench` from KernelBench/level1/34_InstanceNorm.py.

At the problem's own size (batch_size=112, features=64, dim1=512, dim2=512, reduced=262144):
- x: ['batch_size', 'features', 'dim1', 'dim2'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 112 -> 14/15, features 64 -> 8/11, dim1
  512 -> 8/9, dim2 512 -> 16/17
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
    Simple model that performs Instance Normalization.
    """
    def __init__(self, num_features: int):
        """
        Initializes the InstanceNorm layer.

        Args:
            num_features (int): Number of features in the input tensor.
        """
        super(Model, self).__init__()
        self.inorm = nn.InstanceNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies Instance Normalization to the input tensor.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, num_features, height, width).

        Returns:
            torch.Tensor: Output tensor with Instance Normalization applied, same shape as input.
        """
        return self.inorm(x)

batch_size = 112  # heavier workload
features = 64
dim1 = 512
dim2 = 512

def get_inputs():
    x = torch.rand(batch_size, features, dim1, dim2)
    return [x]

def get_init_inputs():
    return [features]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten native_batch_norm, run on the meta
#   device at 10 sizes); for a drawn size, the largest of dim1 * dim2
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset, leading
# - probed at the CPU sizes and at reach:dim1=512,dim2=512 (the longest reduction)
# - a leading view slices dim1 (second to last in a rank-3+ input)
# - dims: batch_size 1..112, features 1..64, dim1 2..512, dim2 1..512 (the least and the blocks
#   each takes, tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'features', 'dim1', 'dim2']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 112,
                     'features': 64,
                     'dim1': 512,
                     'dim2': 512,
                     'reduced': 262144},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 14, 'features': 8, 'dim1': 8, 'dim2': 16, 'reduced': 128},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 15, 'features': 11, 'dim1': 9, 'dim2': 17, 'reduced': 153},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 112,
                     'features': 64,
                     'dim1': 512,
                     'dim2': 512,
                     'reduced': 262144},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/34_InstanceNorm.py',
            'sha256': '2e0d8b3c14a731ba9051a7487949e6bcb52e36eee6b707499cdc670332aedcad',
            'level': 1,
            'problem': 34,
            'title': 'InstanceNorm',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 112 -> 14/15, features "
                      '64 -> 8/11, dim1 512 -> 8/9, dim2 512 -> 16/17',
                      'domain: batch_size, features, dim1, dim2 drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 112], 'cpu_max': 15},
                     'features': {'range': [1, 64], 'cpu_max': 11},
                     'dim1': {'range': [2, 512], 'cpu_max': 9},
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
               'dim1': ['dim1', None],
               'dim2': ['dim2', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 112, 'features': 64, 'dim1': 512, 'dim2': 512, 'reduced': 262144},
  'bytes': 15032385536,
  'flops': 0},
 {'size': 'small',
  'dims': {'batch_size': 14, 'features': 8, 'dim1': 8, 'dim2': 16, 'reduced': 128},
  'bytes': 114688,
  'flops': 0},
 {'size': 'odd',
  'dims': {'batch_size': 15, 'features': 11, 'dim1': 9, 'dim2': 17, 'reduced': 153},
  'bytes': 201960,
  'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'reduced': 'reduced', 'sites': [{'factor': 1.0, 'powers': {'dim1': 1, 'dim2': 1}}]}

PROBLEM = DrawnProblem('kb1_34_instancenorm', SOURCE, SPEC, PLAN, DERIVED)


def kb1_34_instancenorm(x: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(x)


def eager(x):
    return PROBLEM.eager(x)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
