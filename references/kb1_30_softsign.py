"""kb1_30_softsign: KernelBench level 1, problem 30 (Softsign).

Imported by `kernelgen import kernelbench` from KernelBench/level1/30_Softsign.py.

At the problem's own size (batch_size=4096, dim=393216):
- x: ['batch_size', 'dim'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 4096 -> 128/129, dim 393216 -> 96/97
Note: domain: batch_size, dim drawn

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
    Simple model that performs a Softsign activation.
    """
    def __init__(self):
        super(Model, self).__init__()
    
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies Softsign activation to the input tensor.

        Args:
            x (torch.Tensor): Input tensor of any shape.

        Returns:
            torch.Tensor: Output tensor with Softsign applied, same shape as input.
        """
        return x / (1 + torch.abs(x))

batch_size = 4096
dim = 393216

def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]

def get_init_inputs():
    return []  # No special initialization inputs needed'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset
# - dims: batch_size 1..4096, dim 1..393216 (the least and the blocks each takes, tried on the
#   meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'dim']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem', 'dims': {'batch_size': 4096, 'dim': 393216}, 'interpreter': False},
           {'name': 'small', 'dims': {'batch_size': 128, 'dim': 96}, 'interpreter': True},
           {'name': 'odd', 'dims': {'batch_size': 129, 'dim': 97}, 'interpreter': True}],
 'bench': [{'name': 'problem', 'dims': {'batch_size': 4096, 'dim': 393216}, 'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/30_Softsign.py',
            'sha256': '1c7b8e7dd71284dbfbcc33bf87b94c962b3cca6da90bbd2b5c5e8900b1354a75',
            'level': 1,
            'problem': 30,
            'title': 'Softsign',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 4096 -> 128/129, dim "
                      '393216 -> 96/97',
                      'domain: batch_size, dim drawn']},
 'domain': {'dims': {'batch_size': {'range': [1, 4096], 'cpu_max': 129},
                     'dim': {'range': [1, 393216], 'cpu_max': 97}},
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
                      'specials']}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None], 'dim': ['dim', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 4096, 'dim': 393216},
  'bytes': 12884901888,
  'flops': 0},
 {'size': 'small', 'dims': {'batch_size': 128, 'dim': 96}, 'bytes': 98304, 'flops': 0},
 {'size': 'odd', 'dims': {'batch_size': 129, 'dim': 97}, 'bytes': 100104, 'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb1_30_softsign', SOURCE, SPEC, PLAN, DERIVED)


def kb1_30_softsign(x: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(x)


def eager(x):
    return PROBLEM.eager(x)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
