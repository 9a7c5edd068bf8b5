"""kb2_9_matmul_subtract_multiply_relu: KernelBench level 2, problem 9 (Matmul_Subtract_Multiply_ReLU).

Imported by `kernelgen import kernelbench` from KernelBench/level2/9_Matmul_Subtract_Multiply_ReLU.py.

At the problem's own size (batch_size=1024, in_features=8192, out_features=8192):
- x: ['batch_size', 'in_features'] float32
- linear_weight: ['out_features', 'in_features'] float32
- linear_bias: ['out_features'] float32
CPU sizes: small, odd.
Note: on the problem's own inputs its output is the same for two draws; the judge's wider values
  are what tell kernels apart
Note: CPU sizes scale the module's constants: batch_size 1024 -> 64/65, in_features 8192 -> 64/67,
  out_features 8192 -> 128/129
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
    Model that performs a matrix multiplication, subtraction, multiplication, and ReLU activation.
    """
    def __init__(self, in_features, out_features, subtract_value, multiply_value):
        super(Model, self).__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.subtract_value = subtract_value
        self.multiply_value = multiply_value

    def forward(self, x):
        x = self.linear(x)
        x = x - self.subtract_value
        x = x * self.multiply_value
        x = torch.relu(x)
        return x

batch_size = 1024
in_features = 8192
out_features = 8192
subtract_value = 2.0
multiply_value = 1.5

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, subtract_value, multiply_value]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: in_features, the terms each output sums (aten addmm, run on the meta device at 9
#   sizes)
# - value families: normal, uniform, wide, small, spike, sorted_up, sorted_down, constant, ties,
#   denormal, neg_inf, specials; not large (small: 118 of 8192 entries off, |err| 3.84e+04 > atol
#   6e-05 + rtol 1.3e-06*|ref|); negative (odd: 3 of 8385 entries off, |err| 0.000128 > atol
#   6.1e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset
# - probed at the CPU sizes and at reach:in_features=8192 (the longest reduction)
# - dims: batch_size 1..1024, in_features 1..8192, out_features 1..8192 (the least and the blocks
#   each takes, tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_features']},
            {'name': 'linear_weight',
             'shape': ['out_features', 'in_features'],
             'layout_varies': False},
            {'name': 'linear_bias', 'shape': ['out_features'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 1024, 'in_features': 8192, 'out_features': 8192},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64, 'in_features': 64, 'out_features': 128},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65, 'in_features': 67, 'out_features': 129},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 1024, 'in_features': 8192, 'out_features': 8192},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/9_Matmul_Subtract_Multiply_ReLU.py',
            'sha256': '110e75834cd898f532262ce516e318b8e7a9e85acda705baefcebe687ff85b21',
            'level': 2,
            'problem': 9,
            'title': 'Matmul_Subtract_Multiply_ReLU',
            'convolution': False,
            'cpu': True,
            'notes': ["on the problem's own inputs its output is the same for two draws; the "
                      "judge's wider values are what tell kernels apart",
                      "CPU sizes scale the module's constants: batch_size 1024 -> 64/65, "
                      'in_features 8192 -> 64/67, out_features 8192 -> 128/129',
                      'domain: batch_size, in_features, out_features drawn']},
 'reduction': 'in_features',
 'domain': {'dims': {'batch_size': {'range': [1, 1024], 'cpu_max': 65},
                     'in_features': {'range': [1, 8192], 'cpu_max': 67},
                     'out_features': {'range': [1, 8192], 'cpu_max': 129}},
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
 'params': [{'name': 'linear_weight', 'state': 'linear.weight', 'constant': None},
            {'name': 'linear_bias', 'state': 'linear.bias', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 1024, 'in_features': 8192, 'out_features': 8192},
  'bytes': 335577088,
  'flops': 137438953472},
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

PROBLEM = DrawnProblem('kb2_9_matmul_subtract_multiply_relu', SOURCE, SPEC, PLAN, DERIVED)


def kb2_9_matmul_subtract_multiply_relu(
    x: torch.Tensor,
    linear_weight: torch.Tensor,
    linear_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, linear_weight, linear_bias)


def eager(x, linear_weight, linear_bias):
    return PROBLEM.eager(x, linear_weight, linear_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
