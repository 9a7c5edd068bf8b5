"""kb1_94_mseloss: KernelBench level 1, problem 94 (MSELoss).

Imported by `kernelgen import kernelbench` from KernelBench/level1/94_MSELoss.py.

At the problem's own size (batch_size=32768, input_shape_0=32768, dim=1, reduced=1073741824):
- predictions: ['batch_size', 'input_shape_0'] float32
- targets: ['batch_size', 'input_shape_0'] float32
CPU sizes: small, odd.
Note: predictions: drawn by the problem's own get_inputs() (not a plain rand/randn)
Note: CPU sizes scale the module's constants: batch_size 32768 -> 64/65, input_shape_0 32768 ->
  128/129
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
    A model that computes the Mean Squared Error loss for regression tasks.

    Parameters:
        None
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, predictions, targets):
        return torch.mean((predictions - targets) ** 2)

batch_size = 32768
input_shape = (32768,)
dim = 1

def get_inputs():
    scale = torch.rand(())
    return [torch.rand(batch_size, *input_shape)*scale, torch.rand(batch_size, *input_shape)]

def get_init_inputs():
    return []
'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten mean, run on the meta device at 8
#   sizes); for a drawn size, the largest of batch_size * input_shape_0
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset
# - dims: batch_size 1..32768, input_shape_0 1..32768 (the least and the blocks each takes, tried
#   on the meta device from the CPU size); kept: dim=1
SPEC = {'inputs': [{'name': 'predictions', 'shape': ['batch_size', 'input_shape_0']},
            {'name': 'targets', 'shape': ['batch_size', 'input_shape_0']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 32768, 'input_shape_0': 32768, 'dim': 1, 'reduced': 1073741824},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64, 'input_shape_0': 128, 'dim': 1, 'reduced': 8192},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65, 'input_shape_0': 129, 'dim': 1, 'reduced': 8385},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 32768, 'input_shape_0': 32768, 'dim': 1, 'reduced': 1073741824},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/94_MSELoss.py',
            'sha256': '1bc23c8534d817cd5acff184eb8d3849f43b96b6dffcde6ab78a1c71a8fe64f3',
            'level': 1,
            'problem': 94,
            'title': 'MSELoss',
            'convolution': False,
            'cpu': True,
            'notes': ["predictions: drawn by the problem's own get_inputs() (not a plain "
                      'rand/randn)',
                      "CPU sizes scale the module's constants: batch_size 32768 -> 64/65, "
                      'input_shape_0 32768 -> 128/129',
                      'domain: batch_size, input_shape_0 drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 32768], 'cpu_max': 65},
                     'input_shape_0': {'range': [1, 32768], 'cpu_max': 129}},
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
 'inputs': [{'name': 'predictions', 'draw': 'problem'}, {'name': 'targets', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 32768, 'input_shape_0': 32768, 'dim': 1, 'reduced': 1073741824},
  'bytes': 8589934596,
  'flops': 0},
 {'size': 'small',
  'dims': {'batch_size': 64, 'input_shape_0': 128, 'dim': 1, 'reduced': 8192},
  'bytes': 65540,
  'flops': 0},
 {'size': 'odd',
  'dims': {'batch_size': 65, 'input_shape_0': 129, 'dim': 1, 'reduced': 8385},
  'bytes': 67084,
  'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'dim': 1},
 'reduced': 'reduced',
 'sites': [{'factor': 1.0, 'powers': {'batch_size': 1, 'input_shape_0': 1}}]}

PROBLEM = DrawnProblem('kb1_94_mseloss', SOURCE, SPEC, PLAN, DERIVED)


def kb1_94_mseloss(predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(predictions, targets)


def eager(predictions, targets):
    return PROBLEM.eager(predictions, targets)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
