"""kb2_45_gemm_sigmoid_logsumexp: KernelBench level 2, problem 45 (Gemm_Sigmoid_LogSumExp).

Imported by `kernelgen import kernelbench` from KernelBench/level2/45_Gemm_Sigmoid_LogSumExp.py.

At the problem's own size (batch_size=16384, input_size=2048, hidden_size=4096, output_size=1024,
  reduced=4096):
- x: ['batch_size', 'input_size'] float32
- linear1_weight: ['hidden_size', 'input_size'] float32
- linear1_bias: ['hidden_size'] float32
- linear2_weight: ['output_size', 'hidden_size'] float32
- linear2_bias: ['output_size'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 16384 -> 64/65, input_size 2048 -> 64/67,
  hidden_size 4096 -> 128/129, output_size 1024 -> 128/131
Note: domain: batch_size, input_size, hidden_size, output_size drawn

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
    Model that performs a matrix multiplication (Gemm), applies Sigmoid,
    another Gemm, and computes LogSumExp over features.
    """
    def __init__(self, input_size, hidden_size, output_size):
        super(Model, self).__init__()
        self.linear1 = nn.Linear(input_size, hidden_size)
        self.linear2 = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        x = self.linear1(x)
        x = torch.sigmoid(x)
        x = self.linear2(x)
        x = torch.logsumexp(x, dim=1)  # compute LogSumExp over features per sample
        return x

batch_size = 16384
input_size = 2048
hidden_size = 4096
output_size = 1024

def get_inputs():
    return [torch.rand(batch_size, input_size)]

def get_init_inputs():
    return [input_size, hidden_size, output_size]
'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten addmm, logsumexp, run on the meta device
#   at 10 sizes); for a drawn size, the largest of input_size or hidden_size or output_size
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset
# - dims: batch_size 1..16384, input_size 1..2048, hidden_size 1..4096, output_size 1..1024 (the
#   least and the blocks each takes, tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'input_size']},
            {'name': 'linear1_weight',
             'shape': ['hidden_size', 'input_size'],
             'layout_varies': False},
            {'name': 'linear1_bias', 'shape': ['hidden_size'], 'layout_varies': False},
            {'name': 'linear2_weight',
             'shape': ['output_size', 'hidden_size'],
             'layout_varies': False},
            {'name': 'linear2_bias', 'shape': ['output_size'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 16384,
                     'input_size': 2048,
                     'hidden_size': 4096,
                     'output_size': 1024,
                     'reduced': 4096},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64,
                     'input_size': 64,
                     'hidden_size': 128,
                     'output_size': 128,
                     'reduced': 128},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65,
                     'input_size': 67,
                     'hidden_size': 129,
                     'output_size': 131,
                     'reduced': 131},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 16384,
                     'input_size': 2048,
                     'hidden_size': 4096,
                     'output_size': 1024,
                     'reduced': 4096},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/45_Gemm_Sigmoid_LogSumExp.py',
            'sha256': 'c206fcec5ac6b6253fb2f86992a865ea2f560fe54ebfd7a7bf542fc9852cd2c4',
            'level': 2,
            'problem': 45,
            'title': 'Gemm_Sigmoid_LogSumExp',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 16384 -> 64/65, "
                      'input_size 2048 -> 64/67, hidden_size 4096 -> 128/129, output_size 1024 -> '
                      '128/131',
                      'domain: batch_size, input_size, hidden_size, output_size drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 16384], 'cpu_max': 65},
                     'input_size': {'range': [1, 2048], 'cpu_max': 67},
                     'hidden_size': {'range': [1, 4096], 'cpu_max': 129},
                     'output_size': {'range': [1, 1024], 'cpu_max': 131}},
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
               'input_size': ['input_size', None],
               'hidden_size': ['hidden_size', None],
               'output_size': ['output_size', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'linear1_weight', 'state': 'linear1.weight', 'constant': None},
            {'name': 'linear1_bias', 'state': 'linear1.bias', 'constant': None},
            {'name': 'linear2_weight', 'state': 'linear2.weight', 'constant': None},
            {'name': 'linear2_bias', 'state': 'linear2.bias', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 16384,
           'input_size': 2048,
           'hidden_size': 4096,
           'output_size': 1024,
           'reduced': 4096},
  'bytes': 184635392,
  'flops': 412316860416},
 {'size': 'small',
  'dims': {'batch_size': 64,
           'input_size': 64,
           'hidden_size': 128,
           'output_size': 128,
           'reduced': 128},
  'bytes': 115968,
  'flops': 3145728},
 {'size': 'odd',
  'dims': {'batch_size': 65,
           'input_size': 67,
           'hidden_size': 129,
           'output_size': 131,
           'reduced': 131},
  'bytes': 120888,
  'flops': 3320460}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'reduced': 'reduced',
 'sites': [{'factor': 1.0, 'powers': {'input_size': 1}},
           {'factor': 1.0, 'powers': {'hidden_size': 1}},
           {'factor': 1.0, 'powers': {'output_size': 1}}]}

PROBLEM = DrawnProblem('kb2_45_gemm_sigmoid_logsumexp', SOURCE, SPEC, PLAN, DERIVED)


def kb2_45_gemm_sigmoid_logsumexp(
    x: torch.Tensor,
    linear1_weight: torch.Tensor,
    linear1_bias: torch.Tensor,
    linear2_weight: torch.Tensor,
    linear2_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, linear1_weight, linear1_bias, linear2_weight, linear2_bias)


def eager(x, linear1_weight, linear1_bias, linear2_weight, linear2_bias):
    return PROBLEM.eager(x, linear1_weight, linear1_bias, linear2_weight, linear2_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
