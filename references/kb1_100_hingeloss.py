"""kb1_100_hingeloss: KernelBench level 1, problem 100 (HingeLoss).

Imported by `kernelgen import kernelbench` from KernelBench/level1/100_HingeLoss.py.

At the problem's own size (batch_size=32768, input_shape_0=32768, dim=1, reduced=1073741824):
- predictions: ['batch_size', 'batch_size'] float32
- targets: ['batch_size'] float32
CPU sizes: small.
Note: targets: drawn by the problem's own get_inputs() (not a plain rand/randn)
Note: CPU sizes scale the module's constants: batch_size 32768 -> 128, input_shape_0 32768 -> 128
Note: domain: batch_size drawn

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
    A model that computes Hinge Loss for binary classification tasks.

    Parameters:
        None
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, predictions, targets):
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))

batch_size = 32768
input_shape = (32768,)
dim = 1

def get_inputs():
    return [torch.rand(batch_size, *input_shape), torch.randint(0, 2, (batch_size,)).float() * 2 - 1]

def get_init_inputs():
    return []'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten mean, run on the meta device at 5
#   sizes); for a drawn size, the largest of batch_size^2
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset
# - dims: batch_size 1..32768 (the least and the blocks each takes, tried on the meta device from
#   the CPU size); tied: input_shape_0 = batch_size; kept: dim=1
SPEC = {'inputs': [{'name': 'predictions', 'shape': ['batch_size', 'batch_size']},
            {'name': 'targets', 'shape': ['batch_size']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 32768, 'input_shape_0': 32768, 'dim': 1, 'reduced': 1073741824},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 128, 'input_shape_0': 128, 'dim': 1, 'reduced': 16384},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 32768, 'input_shape_0': 32768, 'dim': 1, 'reduced': 1073741824},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/100_HingeLoss.py',
            'sha256': '8e7ab261247e266e1b765957db04ea6972ac5dc9544607c059848d2417d5d3a1',
            'level': 1,
            'problem': 100,
            'title': 'HingeLoss',
            'convolution': False,
            'cpu': True,
            'notes': ["targets: drawn by the problem's own get_inputs() (not a plain rand/randn)",
                      "CPU sizes scale the module's constants: batch_size 32768 -> 128, "
                      'input_shape_0 32768 -> 128',
                      'domain: batch_size drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 32768], 'cpu_max': 128}},
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
 'inputs': [{'name': 'predictions', 'draw': 'judge'}, {'name': 'targets', 'draw': 'problem'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 32768, 'input_shape_0': 32768, 'dim': 1, 'reduced': 1073741824},
  'bytes': 4295098372,
  'flops': 0},
 {'size': 'small',
  'dims': {'batch_size': 128, 'input_shape_0': 128, 'dim': 1, 'reduced': 16384},
  'bytes': 66052,
  'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'dim': 1},
 'ties': {'input_shape_0': 'batch_size'},
 'reduced': 'reduced',
 'sites': [{'factor': 1.0, 'powers': {'batch_size': 2}}]}

PROBLEM = DrawnProblem('kb1_100_hingeloss', SOURCE, SPEC, PLAN, DERIVED)


def kb1_100_hingeloss(predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(predictions, targets)


def eager(predictions, targets):
    return PROBLEM.eager(predictions, targets)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
