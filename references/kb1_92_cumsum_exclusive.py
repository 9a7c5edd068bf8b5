"""kb1_92_cumsum_exclusive: KernelBench level 1, problem 92 (cumsum_exclusive).

Imported by `kernelgen import kernelbench` from KernelBench/level1/92_cumsum_exclusive.py.

At the problem's own size (batch_size=32768, input_shape_0=32768, dim=1, reduced=32767):
- x: ['batch_size', 'input_shape_0'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 32768 -> 128/129, input_shape_0 32768 ->
  128/131
Note: domain: batch_size, input_shape_0 drawn

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
    A model that performs an exclusive cumulative sum (does not include the current element).

    Parameters:
        dim (int): The dimension along which to perform the exclusive cumulative sum.
    """

    def __init__(self, dim):
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x):
        cumsum = torch.cumsum(x.narrow(dim=self.dim, start=0, length=x.size(self.dim)-1), dim=self.dim)
        return torch.cat((torch.zeros_like(x.select(self.dim, 0).unsqueeze(self.dim)), cumsum), dim=self.dim)

batch_size = 32768
input_shape = (32768,)
dim = 1

def get_inputs():
    return [torch.rand(batch_size, *input_shape)]

def get_init_inputs():
    return [dim]
'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten cumsum, run on the meta device at 8
#   sizes); for a drawn size, the largest of input_shape_0
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset
# - probed at the CPU sizes and at reach:input_shape_0=32768 (the longest reduction)
# - dims: batch_size 1..32768, input_shape_0 1..32768 (the least and the blocks each takes, tried
#   on the meta device from the CPU size); kept: dim=1
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'input_shape_0']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 32768, 'input_shape_0': 32768, 'dim': 1, 'reduced': 32767},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 128, 'input_shape_0': 128, 'dim': 1, 'reduced': 127},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 129, 'input_shape_0': 131, 'dim': 1, 'reduced': 130},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 32768, 'input_shape_0': 32768, 'dim': 1, 'reduced': 32767},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/92_cumsum_exclusive.py',
            'sha256': 'ec1551c196130f5d7fae707f0750016c35b988e76aa3f1657da4347f463ced86',
            'level': 1,
            'problem': 92,
            'title': 'cumsum_exclusive',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 32768 -> 128/129, "
                      'input_shape_0 32768 -> 128/131',
                      'domain: batch_size, input_shape_0 drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 32768], 'cpu_max': 129},
                     'input_shape_0': {'range': [1, 32768], 'cpu_max': 131}},
            'dtypes': ['float32'],
            'layouts': ['contiguous', 'strided', 'transposed', 'offset'],
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
            'derived': ['reduced']}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'input_shape_0': ['input_shape', 0],
               'dim': ['dim', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 32768, 'input_shape_0': 32768, 'dim': 1, 'reduced': 32767},
  'bytes': 8589934592,
  'flops': 0},
 {'size': 'small',
  'dims': {'batch_size': 128, 'input_shape_0': 128, 'dim': 1, 'reduced': 127},
  'bytes': 131072,
  'flops': 0},
 {'size': 'odd',
  'dims': {'batch_size': 129, 'input_shape_0': 131, 'dim': 1, 'reduced': 130},
  'bytes': 135192,
  'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'dim': 1},
 'reduced': 'reduced',
 'sites': [{'factor': 0.999969, 'powers': {'input_shape_0': 1}}]}

PROBLEM = DrawnProblem('kb1_92_cumsum_exclusive', SOURCE, SPEC, PLAN, DERIVED)


def kb1_92_cumsum_exclusive(x: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(x)


def eager(x):
    return PROBLEM.eager(x)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
