"""kb1_98_kldivloss: KernelBench level 1, problem 98 (KLDivLoss).

Imported by `kernelgen import kernelbench` from KernelBench/level1/98_KLDivLoss.py.

At the problem's own size (batch_size=16384, input_shape_0=16384, dim=1, reduced=268435456):
- predictions: ['batch_size', 'input_shape_0'] float32
- targets: ['batch_size', 'input_shape_0'] float32
CPU sizes: small, odd.
Note: predictions: drawn by the problem's own get_inputs() (not a plain rand/randn)
Note: targets: drawn by the problem's own get_inputs() (not a plain rand/randn)
Note: CPU sizes scale the module's constants: batch_size 16384 -> 64/65, input_shape_0 16384 ->
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
    A model that computes Kullback-Leibler Divergence for comparing two distributions.

    Parameters:
        None
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, predictions, targets):
        return torch.nn.functional.kl_div(torch.log(predictions), targets, reduction='batchmean')

batch_size = 8192 * 2
input_shape = (8192 * 2,)
dim = 1

def get_inputs():
    scale = torch.rand(())
    return [(torch.rand(batch_size, *input_shape)*scale).softmax(dim=-1), torch.rand(batch_size, *input_shape).softmax(dim=-1)]

def get_init_inputs():
    return []
'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten sum, run on the meta device at 8 sizes);
#   for a drawn size, the largest of batch_size * input_shape_0
# - value families: no input takes the judge's values, the sizes' own
# - layouts: contiguous, strided, transposed, offset
# - dims: batch_size 1..16384, input_shape_0 1..16384 (the least and the blocks each takes, tried
#   on the meta device from the CPU size); kept: dim=1
SPEC = {'inputs': [{'name': 'predictions', 'shape': ['batch_size', 'input_shape_0']},
            {'name': 'targets', 'shape': ['batch_size', 'input_shape_0']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 16384, 'input_shape_0': 16384, 'dim': 1, 'reduced': 268435456},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64, 'input_shape_0': 128, 'dim': 1, 'reduced': 8192},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65, 'input_shape_0': 129, 'dim': 1, 'reduced': 8385},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 16384, 'input_shape_0': 16384, 'dim': 1, 'reduced': 268435456},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/98_KLDivLoss.py',
            'sha256': 'ff13e10c26851cc7262cd993dd289ad21b18dbb1dd65bb2159d7052582b1ccd5',
            'level': 1,
            'problem': 98,
            'title': 'KLDivLoss',
            'convolution': False,
            'cpu': True,
            'notes': ["predictions: drawn by the problem's own get_inputs() (not a plain "
                      'rand/randn)',
                      "targets: drawn by the problem's own get_inputs() (not a plain rand/randn)",
                      "CPU sizes scale the module's constants: batch_size 16384 -> 64/65, "
                      'input_shape_0 16384 -> 128/129',
                      'domain: batch_size, input_shape_0 drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 16384], 'cpu_max': 65},
                     'input_shape_0': {'range': [1, 16384], 'cpu_max': 129}},
            'dtypes': ['float32'],
            'layouts': ['contiguous', 'strided', 'transposed', 'offset'],
            'dists': ['normal', 'uniform'],
            'derived': ['reduced']}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'input_shape_0': ['input_shape', 0],
               'dim': ['dim', None]},
 'inputs': [{'name': 'predictions', 'draw': 'problem'}, {'name': 'targets', 'draw': 'problem'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 16384, 'input_shape_0': 16384, 'dim': 1, 'reduced': 268435456},
  'bytes': 2147483652,
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

PROBLEM = DrawnProblem('kb1_98_kldivloss', SOURCE, SPEC, PLAN, DERIVED)


def kb1_98_kldivloss(predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(predictions, targets)


def eager(predictions, targets):
    return PROBLEM.eager(predictions, targets)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
