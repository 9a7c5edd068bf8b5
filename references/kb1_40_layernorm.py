"""kb1_40_layernorm: KernelBench level 1, problem 40 (LayerNorm).

Imported by `kernelgen import kernelbench` from KernelBench/level1/40_LayerNorm.py.

At the problem's own size (batch_size=16, features=64, dim1=256, dim2=256, reduced=4194304):
- x: ['batch_size', 'features', 'dim1', 'dim2'] float32
- ln_weight: ['features', 'dim1', 'dim2'] float32
- ln_bias: ['features', 'dim1', 'dim2'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 16 -> 8/9, features 64 -> 8/13, dim1 256
  -> 8/11, dim2 256 -> 16/17
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
    Simple model that performs Layer Normalization.
    """
    def __init__(self, normalized_shape: tuple):
        """
        Initializes the LayerNorm layer.

        Args:
            normalized_shape (tuple): Shape of the input tensor to be normalized.
        """
        super(Model, self).__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies Layer Normalization to the input tensor.

        Args:
            x (torch.Tensor): Input tensor of shape (*, normalized_shape).

        Returns:
            torch.Tensor: Output tensor with Layer Normalization applied, same shape as input.
        """
        return self.ln(x)

batch_size = 16
features = 64
dim1 = 256
dim2 = 256

def get_inputs():
    x = torch.rand(batch_size, features, dim1, dim2)
    return [x]

def get_init_inputs():
    return [(features, dim1, dim2)]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten native_layer_norm, run on the meta
#   device at 10 sizes); for a drawn size, the largest of features * dim1 * dim2
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset, leading
# - a leading view slices dim1 (second to last in a rank-3+ input)
# - dims: batch_size 1..16, features 1..64, dim1 1..256, dim2 1..256 (the least and the blocks
#   each takes, tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'features', 'dim1', 'dim2']},
            {'name': 'ln_weight', 'shape': ['features', 'dim1', 'dim2'], 'layout_varies': False},
            {'name': 'ln_bias', 'shape': ['features', 'dim1', 'dim2'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 16,
                     'features': 64,
                     'dim1': 256,
                     'dim2': 256,
                     'reduced': 4194304},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 8, 'features': 8, 'dim1': 8, 'dim2': 16, 'reduced': 1024},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 9, 'features': 13, 'dim1': 11, 'dim2': 17, 'reduced': 2431},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 16,
                     'features': 64,
                     'dim1': 256,
                     'dim2': 256,
                     'reduced': 4194304},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/40_LayerNorm.py',
            'sha256': '8d975d7cee6946513dcfb6ba84c971e53a890f9d9c6f0a4fb828904941f25975',
            'level': 1,
            'problem': 40,
            'title': 'LayerNorm',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 16 -> 8/9, features 64 "
                      '-> 8/13, dim1 256 -> 8/11, dim2 256 -> 16/17',
                      'domain: batch_size, features, dim1, dim2 drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 16], 'cpu_max': 9},
                     'features': {'range': [1, 64], 'cpu_max': 13},
                     'dim1': {'range': [1, 256], 'cpu_max': 11},
                     'dim2': {'range': [1, 256], 'cpu_max': 17}},
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
 'params': [{'name': 'ln_weight', 'state': 'ln.weight', 'constant': 1.0},
            {'name': 'ln_bias', 'state': 'ln.bias', 'constant': 0.0}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 16, 'features': 64, 'dim1': 256, 'dim2': 256, 'reduced': 4194304},
  'bytes': 570425344,
  'flops': 0},
 {'size': 'small',
  'dims': {'batch_size': 8, 'features': 8, 'dim1': 8, 'dim2': 16, 'reduced': 1024},
  'bytes': 73728,
  'flops': 0},
 {'size': 'odd',
  'dims': {'batch_size': 9, 'features': 13, 'dim1': 11, 'dim2': 17, 'reduced': 2431},
  'bytes': 194480,
  'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'reduced': 'reduced', 'sites': [{'factor': 1.0, 'powers': {'features': 1, 'dim1': 1, 'dim2': 1}}]}

PROBLEM = DrawnProblem('kb1_40_layernorm', SOURCE, SPEC, PLAN, DERIVED)


def kb1_40_layernorm(
    x: torch.Tensor,
    ln_weight: torch.Tensor,
    ln_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, ln_weight, ln_bias)


def eager(x, ln_weight, ln_bias):
    return PROBLEM.eager(x, ln_weight, ln_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
