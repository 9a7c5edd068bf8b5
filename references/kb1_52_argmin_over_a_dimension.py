"""kb1_52_argmin_over_a_dimension: KernelBench level 1, problem 52 (Argmin_over_a_dimension).

Imported by `kernelgen import kernelbench` from KernelBench/level1/52_Argmin_over_a_dimension.py.

At the problem's own size (batch_size=128, dim1=4096, dim2=4095, dim=1):
- x: ['batch_size', 'dim1', 'dim2'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 128 -> 16/17, dim1 4096 -> 32/33, dim2
  4095 -> 32/35
Note: domain: batch_size, dim1, dim2 drawn

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
    Simple model that finds the index of the minimum value along a specified dimension.
    """
    def __init__(self, dim: int):
        """
        Initializes the model with the dimension to perform argmin on.

        Args:
            dim (int): Dimension along which to find the minimum value.
        """
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Finds the index of the minimum value along the specified dimension.

        Args:
            x (torch.Tensor): Input tensor.

        Returns:
            torch.Tensor: Tensor containing the indices of the minimum values along the specified dimension.
        """
        return torch.argmin(x, dim=self.dim)

batch_size = 128
dim1 = 4096
dim2 = 4095
dim = 1

def get_inputs():
    x = torch.rand(batch_size, dim1, dim2)
    return [x]

def get_init_inputs():
    return [dim]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset, leading
# - a leading view slices dim1 (second to last in a rank-3+ input)
# - dims: batch_size 1..128, dim1 1..4096, dim2 1..4095 (the least and the blocks each takes,
#   tried on the meta device from the CPU size); kept: dim=1
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'dim1', 'dim2']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 128, 'dim1': 4096, 'dim2': 4095, 'dim': 1},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 16, 'dim1': 32, 'dim2': 32, 'dim': 1},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 17, 'dim1': 33, 'dim2': 35, 'dim': 1},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 128, 'dim1': 4096, 'dim2': 4095, 'dim': 1},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/52_Argmin_over_a_dimension.py',
            'sha256': 'e1764caddce33679126f225b4da455a95978be85ccf79a372e3ef549ee35ba8f',
            'level': 1,
            'problem': 52,
            'title': 'Argmin_over_a_dimension',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 128 -> 16/17, dim1 4096 "
                      '-> 32/33, dim2 4095 -> 32/35',
                      'domain: batch_size, dim1, dim2 drawn']},
 'domain': {'dims': {'batch_size': {'range': [1, 128], 'cpu_max': 17},
                     'dim1': {'range': [1, 4096], 'cpu_max': 33},
                     'dim2': {'range': [1, 4095], 'cpu_max': 35}},
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
               'dim1': ['dim1', None],
               'dim2': ['dim2', None],
               'dim': ['dim', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 128, 'dim1': 4096, 'dim2': 4095, 'dim': 1},
  'bytes': 8592030720,
  'flops': 0},
 {'size': 'small',
  'dims': {'batch_size': 16, 'dim1': 32, 'dim2': 32, 'dim': 1},
  'bytes': 69632,
  'flops': 0},
 {'size': 'odd',
  'dims': {'batch_size': 17, 'dim1': 33, 'dim2': 35, 'dim': 1},
  'bytes': 83300,
  'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'dim': 1}}

PROBLEM = DrawnProblem('kb1_52_argmin_over_a_dimension', SOURCE, SPEC, PLAN, DERIVED)


def kb1_52_argmin_over_a_dimension(x: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(x)


def eager(x):
    return PROBLEM.eager(x)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
