"""kb1_33_batchnorm: KernelBench level 1, problem 33 (BatchNorm).

Imported by `kernelgen import kernelbench` from KernelBench/level1/33_BatchNorm.py.

At the problem's own size (batch_size=64, features=64, dim1=512, dim2=512, reduced=16777216):
- x: ['batch_size', 'features', 'dim1', 'dim2'] float32
- bn_weight: ['features'] float32
- bn_bias: ['features'] float32
CPU sizes: small, odd.
Note: buffers the forward updates, kept inside the reference: bn.running_mean, bn.running_var,
  bn.num_batches_tracked
Note: CPU sizes scale the module's constants: batch_size 64 -> 8/9, features 64 -> 8/13, dim1 512
  -> 8/11, dim2 512 -> 16/17
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
    Simple model that performs Batch Normalization.
    """
    def __init__(self, num_features: int):
        """
        Initializes the BatchNorm layer.

        Args:
            num_features (int): Number of features in the input tensor.
        """
        super(Model, self).__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies Batch Normalization to the input tensor.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, num_features, *).

        Returns:
            torch.Tensor: Output tensor with Batch Normalization applied, same shape as input.
        """
        return self.bn(x)

batch_size = 64
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
#   device at 10 sizes); for a drawn size, the largest of batch_size * dim1 * dim2
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset, leading
# - a leading view slices dim1 (second to last in a rank-3+ input)
# - dims: batch_size 2..64, features 1..64, dim1 1..512, dim2 1..512 (the least and the blocks
#   each takes, tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'features', 'dim1', 'dim2']},
            {'name': 'bn_weight', 'shape': ['features'], 'layout_varies': False},
            {'name': 'bn_bias', 'shape': ['features'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 64,
                     'features': 64,
                     'dim1': 512,
                     'dim2': 512,
                     'reduced': 16777216},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 8, 'features': 8, 'dim1': 8, 'dim2': 16, 'reduced': 1024},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 9, 'features': 13, 'dim1': 11, 'dim2': 17, 'reduced': 1683},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 64,
                     'features': 64,
                     'dim1': 512,
                     'dim2': 512,
                     'reduced': 16777216},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/33_BatchNorm.py',
            'sha256': '0b7f5ca58d6ec76a6faef2f583fa84ab2c14c0bfd09e7faf8c6289187a56cfc4',
            'level': 1,
            'problem': 33,
            'title': 'BatchNorm',
            'convolution': False,
            'cpu': True,
            'notes': ['buffers the forward updates, kept inside the reference: bn.running_mean, '
                      'bn.running_var, bn.num_batches_tracked',
                      "CPU sizes scale the module's constants: batch_size 64 -> 8/9, features 64 "
                      '-> 8/13, dim1 512 -> 8/11, dim2 512 -> 16/17',
                      'domain: batch_size, features, dim1, dim2 drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [2, 64], 'cpu_max': 9},
                     'features': {'range': [1, 64], 'cpu_max': 13},
                     'dim1': {'range': [1, 512], 'cpu_max': 11},
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
 'params': [{'name': 'bn_weight', 'state': 'bn.weight', 'constant': 1.0},
            {'name': 'bn_bias', 'state': 'bn.bias', 'constant': 0.0}],
 'internal': ['bn.running_mean', 'bn.running_var', 'bn.num_batches_tracked']}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 64, 'features': 64, 'dim1': 512, 'dim2': 512, 'reduced': 16777216},
  'bytes': 8589935104,
  'flops': 0},
 {'size': 'small',
  'dims': {'batch_size': 8, 'features': 8, 'dim1': 8, 'dim2': 16, 'reduced': 1024},
  'bytes': 65600,
  'flops': 0},
 {'size': 'odd',
  'dims': {'batch_size': 9, 'features': 13, 'dim1': 11, 'dim2': 17, 'reduced': 1683},
  'bytes': 175136,
  'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'reduced': 'reduced',
 'sites': [{'factor': 1.0, 'powers': {'batch_size': 1, 'dim1': 1, 'dim2': 1}}]}

PROBLEM = DrawnProblem('kb1_33_batchnorm', SOURCE, SPEC, PLAN, DERIVED)


def kb1_33_batchnorm(
    x: torch.Tensor,
    bn_weight: torch.Tensor,
    bn_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, bn_weight, bn_bias)


def eager(x, bn_weight, bn_bias):
    return PROBLEM.eager(x, bn_weight, bn_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
