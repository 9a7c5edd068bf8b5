"""kb1_99_tripletmarginloss: KernelBench level 1, problem 99 (TripletMarginLoss).

Imported by `kernelgen import kernelbench` from KernelBench/level1/99_TripletMarginLoss.py.

At the problem's own size (batch_size=32768, input_shape_0=8192, dim=1, reduced=32768):
- anchor: ['batch_size', 'input_shape_0'] float32
- positive: ['batch_size', 'input_shape_0'] float32
- negative: ['batch_size', 'input_shape_0'] float32
CPU sizes: small, odd.
Note: anchor: drawn by the problem's own get_inputs() (not a plain rand/randn)
Note: CPU sizes scale the module's constants: batch_size 32768 -> 64/65, input_shape_0 8192 ->
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
    A model that computes Triplet Margin Loss for metric learning tasks.

    Parameters:
        margin (float): The margin between the positive and negative samples.
    """
    def __init__(self, margin=1.0):
        super(Model, self).__init__()
        self.loss_fn = torch.nn.TripletMarginLoss(margin=margin)

    def forward(self, anchor, positive, negative):
        return self.loss_fn(anchor, positive, negative)

batch_size = 32768
input_shape = (8192,)
dim = 1

def get_inputs():
    scale = torch.rand(())
    return [torch.rand(batch_size, *input_shape)*scale, torch.rand(batch_size, *input_shape), torch.rand(batch_size, *input_shape)]
    
def get_init_inputs():
    return [1.0]  # Default margin
'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten norm, mean, run on the meta device at 8
#   sizes); for a drawn size, the largest of input_shape_0 or input_shape_0 or batch_size
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset
# - dims: batch_size 1..32768, input_shape_0 1..8192 (the least and the blocks each takes, tried
#   on the meta device from the CPU size); kept: dim=1
SPEC = {'inputs': [{'name': 'anchor', 'shape': ['batch_size', 'input_shape_0']},
            {'name': 'positive', 'shape': ['batch_size', 'input_shape_0']},
            {'name': 'negative', 'shape': ['batch_size', 'input_shape_0']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 32768, 'input_shape_0': 8192, 'dim': 1, 'reduced': 32768},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64, 'input_shape_0': 128, 'dim': 1, 'reduced': 128},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65, 'input_shape_0': 129, 'dim': 1, 'reduced': 129},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 32768, 'input_shape_0': 8192, 'dim': 1, 'reduced': 32768},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/99_TripletMarginLoss.py',
            'sha256': '07fce40303b9ba5fdc3e5b6ae61c35ed47ac291e9e0f4e62c21a8ba2763cea0c',
            'level': 1,
            'problem': 99,
            'title': 'TripletMarginLoss',
            'convolution': False,
            'cpu': True,
            'notes': ["anchor: drawn by the problem's own get_inputs() (not a plain rand/randn)",
                      "CPU sizes scale the module's constants: batch_size 32768 -> 64/65, "
                      'input_shape_0 8192 -> 128/129',
                      'domain: batch_size, input_shape_0 drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 32768], 'cpu_max': 65},
                     'input_shape_0': {'range': [1, 8192], 'cpu_max': 129}},
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
 'inputs': [{'name': 'anchor', 'draw': 'problem'},
            {'name': 'positive', 'draw': 'judge'},
            {'name': 'negative', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 32768, 'input_shape_0': 8192, 'dim': 1, 'reduced': 32768},
  'bytes': 3221225476,
  'flops': 0},
 {'size': 'small',
  'dims': {'batch_size': 64, 'input_shape_0': 128, 'dim': 1, 'reduced': 128},
  'bytes': 98308,
  'flops': 0},
 {'size': 'odd',
  'dims': {'batch_size': 65, 'input_shape_0': 129, 'dim': 1, 'reduced': 129},
  'bytes': 100624,
  'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'dim': 1},
 'reduced': 'reduced',
 'sites': [{'factor': 1.0, 'powers': {'input_shape_0': 1}},
           {'factor': 1.0, 'powers': {'input_shape_0': 1}},
           {'factor': 1.0, 'powers': {'batch_size': 1}}]}

PROBLEM = DrawnProblem('kb1_99_tripletmarginloss', SOURCE, SPEC, PLAN, DERIVED)


def kb1_99_tripletmarginloss(
    anchor: torch.Tensor,
    positive: torch.Tensor,
    negative: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(anchor, positive, negative)


def eager(anchor, positive, negative):
    return PROBLEM.eager(anchor, positive, negative)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
