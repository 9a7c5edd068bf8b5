"""kb2_59_matmul_swish_scaling: KernelBench level 2, problem 59 (Matmul_Swish_Scaling).

Imported by `kernelgen import kernelbench` from KernelBench/level2/59_Matmul_Swish_Scaling.py.

At the problem's own size (batch_size=128, in_features=32768, out_features=32768):
- x: ['batch_size', 'in_features'] float32
- matmul_weight: ['out_features', 'in_features'] float32
- matmul_bias: ['out_features'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 128 -> 64/65, in_features 32768 -> 64/67,
  out_features 32768 -> 128/129
Note: domain: batch_size, in_features, out_features drawn

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
    Simple model that performs a matrix multiplication, applies Swish activation, and scales the result.
    """
    def __init__(self, in_features, out_features, scaling_factor):
        super(Model, self).__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.matmul(x)
        x = x * torch.sigmoid(x)  # Swish activation
        x = x * self.scaling_factor
        return x

batch_size = 128
in_features = 32768
out_features = 32768
scaling_factor = 2.0

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, scaling_factor]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: in_features, the terms each output sums (aten addmm, run on the meta device at 9
#   sizes)
# - value families: normal, uniform, wide, small, spike, sorted_up, sorted_down, constant, ties,
#   denormal, neg_inf, specials; not large (small: 155 of 8192 entries off, |err| 1.71e+04 > atol
#   6e-05 + rtol 1.3e-06*|ref|); negative (small: 4 of 8192 entries off, |err| 0.000251 > atol
#   6e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset
# - probed at the CPU sizes and at reach:in_features=32768 (the longest reduction)
# - dims: batch_size 1..128, in_features 1..32768, out_features 1..32768 (the least and the
#   blocks each takes, tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_features']},
            {'name': 'matmul_weight',
             'shape': ['out_features', 'in_features'],
             'layout_varies': False},
            {'name': 'matmul_bias', 'shape': ['out_features'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 128, 'in_features': 32768, 'out_features': 32768},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64, 'in_features': 64, 'out_features': 128},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65, 'in_features': 67, 'out_features': 129},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 128, 'in_features': 32768, 'out_features': 32768},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/59_Matmul_Swish_Scaling.py',
            'sha256': 'af4bfb47631eb3eee01055c0ae090e7452edacb0aa35fa40d117de2675bc2720',
            'level': 2,
            'problem': 59,
            'title': 'Matmul_Swish_Scaling',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 128 -> 64/65, "
                      'in_features 32768 -> 64/67, out_features 32768 -> 128/129',
                      'domain: batch_size, in_features, out_features drawn']},
 'reduction': 'in_features',
 'domain': {'dims': {'batch_size': {'range': [1, 128], 'cpu_max': 65},
                     'in_features': {'range': [1, 32768], 'cpu_max': 67},
                     'out_features': {'range': [1, 32768], 'cpu_max': 129}},
            'dtypes': ['float32'],
            'layouts': ['contiguous', 'strided', 'transposed', 'offset'],
            'dists': ['normal',
                      'uniform',
                      'wide',
                      'small',
                      'spike',
                      'sorted_up',
                      'sorted_down',
                      'constant',
                      'ties',
                      'denormal',
                      'neg_inf',
                      'specials']}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'in_features': ['in_features', None],
               'out_features': ['out_features', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'matmul_weight', 'state': 'matmul.weight', 'constant': None},
            {'name': 'matmul_bias', 'state': 'matmul.bias', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 128, 'in_features': 32768, 'out_features': 32768},
  'bytes': 4328652800,
  'flops': 274877906944},
 {'size': 'small',
  'dims': {'batch_size': 64, 'in_features': 64, 'out_features': 128},
  'bytes': 82432,
  'flops': 1048576},
 {'size': 'odd',
  'dims': {'batch_size': 65, 'in_features': 67, 'out_features': 129},
  'bytes': 86048,
  'flops': 1123590}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb2_59_matmul_swish_scaling', SOURCE, SPEC, PLAN, DERIVED)


def kb2_59_matmul_swish_scaling(
    x: torch.Tensor,
    matmul_weight: torch.Tensor,
    matmul_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, matmul_weight, matmul_bias)


def eager(x, matmul_weight, matmul_bias):
    return PROBLEM.eager(x, matmul_weight, matmul_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
