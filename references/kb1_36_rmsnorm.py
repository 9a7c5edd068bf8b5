"""kb1_36_rmsnorm: KernelBench level 1, problem 36 (RMSNorm_).

Imported by `kernelgen import kernelbench` from KernelBench/level1/36_RMSNorm_.py.

At the problem's own size (batch_size=112, features=64, dim1=512, dim2=512):
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
    Simple model that performs RMS Normalization.
    """
    def __init__(self, num_features: int, eps: float = 1e-5):
        """
        Initializes the RMSNorm layer.

        Args:
            num_features (int): Number of features in the input tensor.
            eps (float, optional): A small value added to the denominator to avoid division by zero. Defaults to 1e-5.
        """
        super(Model, self).__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies RMS Normalization to the input tensor.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, num_features, *).

        Returns:
            torch.Tensor: Output tensor with RMS Normalization applied, same shape as input.
        """
        # Calculate the RMS along the feature dimension
        rms = torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + self.eps)

        # Normalize the input by dividing by the RMS
        return x / rms

batch_size = 112
features = 64
dim1 = 512
dim2 = 512

def get_inputs():
    x = torch.rand(batch_size, features, dim1, dim2)
    return [x]

def get_init_inputs():
    return [features]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: features, the terms each output sums (aten mean, run on the meta device at 10
#   sizes)
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset, leading
# - probed at the CPU sizes and at reach:features=64 (the longest reduction)
# - a leading view slices dim1 (second to last in a rank-3+ input)
# - dims: batch_size 1..112, features 1..64, dim1 1..512, dim2 1..512 (the least and the blocks
#   each takes, tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'features', 'dim1', 'dim2']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 112, 'features': 64, 'dim1': 512, 'dim2': 512},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 14, 'features': 8, 'dim1': 8, 'dim2': 16},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 15, 'features': 11, 'dim1': 9, 'dim2': 17},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 112, 'features': 64, 'dim1': 512, 'dim2': 512},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/36_RMSNorm_.py',
            'sha256': '8f6ee1b9ee212f3cee1069eff2b7935482713c99596b1024801868065e5a2b1d',
            'level': 1,
            'problem': 36,
            'title': 'RMSNorm_',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 112 -> 14/15, features "
                      '64 -> 8/11, dim1 512 -> 8/9, dim2 512 -> 16/17',
                      'domain: batch_size, features, dim1, dim2 drawn']},
 'reduction': 'features',
 'domain': {'dims': {'batch_size': {'range': [1, 112], 'cpu_max': 15},
                     'features': {'range': [1, 64], 'cpu_max': 11},
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
  'dims': {'batch_size': 112, 'features': 64, 'dim1': 512, 'dim2': 512},
  'bytes': 15032385536,
  'flops': 0},
 {'size': 'small',
  'dims': {'batch_size': 14, 'features': 8, 'dim1': 8, 'dim2': 16},
  'bytes': 114688,
  'flops': 0},
 {'size': 'odd',
  'dims': {'batch_size': 15, 'features': 11, 'dim1': 9, 'dim2': 17},
  'bytes': 201960,
  'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb1_36_rmsnorm', SOURCE, SPEC, PLAN, DERIVED)


def kb1_36_rmsnorm(x: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(x)


def eager(x):
    return PROBLEM.eager(x)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
