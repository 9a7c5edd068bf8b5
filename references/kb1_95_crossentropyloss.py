"""kb1_95_crossentropyloss: KernelBench level 1, problem 95 (CrossEntropyLoss).

Imported by `kernelgen import kernelbench` from KernelBench/level1/95_CrossEntropyLoss.py.

At the problem's own size (batch_size=32768, num_classes=4096, dim=1, reduced=32768):
- predictions: ['batch_size', 'num_classes'] float32
- targets: ['batch_size'] int64
CPU sizes: small, odd.
Note: targets: drawn by the problem's own get_inputs() (integer values)
Note: CPU sizes scale the module's constants: batch_size 32768 -> 128/129, num_classes 4096 ->
  128/131
Note: domain: batch_size, num_classes drawn

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
    A model that computes Cross Entropy Loss for multi-class classification tasks.

    Parameters:
        None
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, predictions, targets):
        return torch.nn.functional.cross_entropy(predictions, targets)

batch_size = 32768
num_classes = 4096
input_shape = (num_classes,)
dim = 1

def get_inputs():
    return [torch.rand(batch_size, *input_shape), torch.randint(0, num_classes, (batch_size,))]

def get_init_inputs():
    return []
'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten _log_softmax, nll_loss_forward, run on
#   the meta device at 8 sizes); for a drawn size, the largest of num_classes or batch_size
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset
# - dims: batch_size 1..32768, num_classes 1..4096 (the least and the blocks each takes, tried on
#   the meta device from the CPU size); kept: dim=1
SPEC = {'inputs': [{'name': 'predictions', 'shape': ['batch_size', 'num_classes']},
            {'name': 'targets',
             'shape': ['batch_size'],
             'dtype': 'int64',
             'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 32768, 'num_classes': 4096, 'dim': 1, 'reduced': 32768},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 128, 'num_classes': 128, 'dim': 1, 'reduced': 128},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 129, 'num_classes': 131, 'dim': 1, 'reduced': 131},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 32768, 'num_classes': 4096, 'dim': 1, 'reduced': 32768},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/95_CrossEntropyLoss.py',
            'sha256': '4cdfaaf1c2118369987c7a0c24b4487fee4bb90fdce50f592bded59cf61ae9bd',
            'level': 1,
            'problem': 95,
            'title': 'CrossEntropyLoss',
            'convolution': False,
            'cpu': True,
            'notes': ["targets: drawn by the problem's own get_inputs() (integer values)",
                      "CPU sizes scale the module's constants: batch_size 32768 -> 128/129, "
                      'num_classes 4096 -> 128/131',
                      'domain: batch_size, num_classes drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 32768], 'cpu_max': 129},
                     'num_classes': {'range': [1, 4096], 'cpu_max': 131}},
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
               'num_classes': ['num_classes', None],
               'dim': ['dim', None]},
 'inputs': [{'name': 'predictions', 'draw': 'judge'}, {'name': 'targets', 'draw': 'problem'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 32768, 'num_classes': 4096, 'dim': 1, 'reduced': 32768},
  'bytes': 537133060,
  'flops': 0},
 {'size': 'small',
  'dims': {'batch_size': 128, 'num_classes': 128, 'dim': 1, 'reduced': 128},
  'bytes': 66564,
  'flops': 0},
 {'size': 'odd',
  'dims': {'batch_size': 129, 'num_classes': 131, 'dim': 1, 'reduced': 131},
  'bytes': 68632,
  'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'dim': 1},
 'reduced': 'reduced',
 'sites': [{'factor': 1.0, 'powers': {'num_classes': 1}},
           {'factor': 1.0, 'powers': {'batch_size': 1}}]}

PROBLEM = DrawnProblem('kb1_95_crossentropyloss', SOURCE, SPEC, PLAN, DERIVED)


def kb1_95_crossentropyloss(predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(predictions, targets)


def eager(predictions, targets):
    return PROBLEM.eager(predictions, targets)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
