"""kb1_88_mingptnewgelu: KernelBench level 1, problem 88 (MinGPTNewGelu).

Imported by `kernelgen import kernelbench` from KernelBench/level1/88_MinGPTNewGelu.py.

At the problem's own size (batch_size=8192, dim=8192):
- x: ['batch_size', 'dim'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 8192 -> 128/129, dim 8192 -> 128/131
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
import torch.nn.functional as F
import math

# From https://github.com/karpathy/minGPT/blob/master/mingpt/model.py

class Model(nn.Module):
    """
    Implementation of the GELU activation function currently in Google BERT repo (identical to OpenAI GPT).
    Reference: Gaussian Error Linear Units (GELU) paper: https://arxiv.org/abs/1606.08415
    """
    def __init__(self):
        super(Model, self).__init__()
    
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))

batch_size = 8192
dim = 8192

def get_inputs():
    return [torch.rand(batch_size, dim)]

def get_init_inputs():
    return []'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset
# - dims: batch_size 1..8192, dim 1..8192 (the least and the blocks each takes, tried on the meta
#   device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'dim']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem', 'dims': {'batch_size': 8192, 'dim': 8192}, 'interpreter': False},
           {'name': 'small', 'dims': {'batch_size': 128, 'dim': 128}, 'interpreter': True},
           {'name': 'odd', 'dims': {'batch_size': 129, 'dim': 131}, 'interpreter': True}],
 'bench': [{'name': 'problem', 'dims': {'batch_size': 8192, 'dim': 8192}, 'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/88_MinGPTNewGelu.py',
            'sha256': '4c715023579e2edc7d7af2a6799ea6cb9ef1b9278670cfbe2d0e61d111003c4f',
            'level': 1,
            'problem': 88,
            'title': 'MinGPTNewGelu',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 8192 -> 128/129, dim "
                      '8192 -> 128/131',
                      'domain: batch_size, dim drawn']},
 'domain': {'dims': {'batch_size': {'range': [1, 8192], 'cpu_max': 129},
                     'dim': {'range': [1, 8192], 'cpu_max': 131}},
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
COSTS = [{'size': 'problem', 'dims': {'batch_size': 8192, 'dim': 8192}, 'bytes': 536870912, 'flops': 0},
 {'size': 'small', 'dims': {'batch_size': 128, 'dim': 128}, 'bytes': 131072, 'flops': 0},
 {'size': 'odd', 'dims': {'batch_size': 129, 'dim': 131}, 'bytes': 135192, 'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb1_88_mingptnewgelu', SOURCE, SPEC, PLAN, DERIVED)


def kb1_88_mingptnewgelu(x: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(x)


def eager(x):
    return PROBLEM.eager(x)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
