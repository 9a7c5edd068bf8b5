"""kb2_56_matmul_sigmoid_sum: KernelBench level 2, problem 56 (Matmul_Sigmoid_Sum).

Imported by `kernelgen import kernelbench` from KernelBench/level2/56_Matmul_Sigmoid_Sum.py.

At the problem's own size (batch_size=128, input_size=32768, hidden_size=32768, reduced=32768):
- x: ['batch_size', 'input_size'] float32
- linear_weight: ['hidden_size', 'input_size'] float32
- linear_bias: ['hidden_size'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 128 -> 64/65, input_size 32768 -> 128/131,
  hidden_size 32768 -> 128/129
Note: domain: batch_size, input_size, hidden_size drawn

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
    Simple model that performs a matrix multiplication, applies sigmoid, and sums the result.
    """
    def __init__(self, input_size, hidden_size):
        super(Model, self).__init__()
        self.linear = nn.Linear(input_size, hidden_size)

    def forward(self, x):
        """
        Args:
            x: Input tensor of shape (batch_size, input_size).

        Returns:
            Output tensor of shape (batch_size, 1).
        """
        x = self.linear(x)
        x = torch.sigmoid(x)
        x = torch.sum(x, dim=1, keepdim=True)
        return x

batch_size = 128
input_size = 32768
hidden_size = 32768

def get_inputs():
    return [torch.rand(batch_size, input_size)]

def get_init_inputs():
    return [input_size, hidden_size]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten addmm, sum, run on the meta device at 9
#   sizes); for a drawn size, the largest of input_size or hidden_size
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset
# - dims: batch_size 1..128, input_size 1..32768, hidden_size 1..32768 (the least and the blocks
#   each takes, tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'input_size']},
            {'name': 'linear_weight',
             'shape': ['hidden_size', 'input_size'],
             'layout_varies': False},
            {'name': 'linear_bias', 'shape': ['hidden_size'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 128,
                     'input_size': 32768,
                     'hidden_size': 32768,
                     'reduced': 32768},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64, 'input_size': 128, 'hidden_size': 128, 'reduced': 128},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65, 'input_size': 131, 'hidden_size': 129, 'reduced': 131},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 128,
                     'input_size': 32768,
                     'hidden_size': 32768,
                     'reduced': 32768},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/56_Matmul_Sigmoid_Sum.py',
            'sha256': '00070bf8cc6a0d0ff1c4cbb78729620575164e67cb03ef1d646bbab332ae1fa3',
            'level': 2,
            'problem': 56,
            'title': 'Matmul_Sigmoid_Sum',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 128 -> 64/65, "
                      'input_size 32768 -> 128/131, hidden_size 32768 -> 128/129',
                      'domain: batch_size, input_size, hidden_size drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 128], 'cpu_max': 65},
                     'input_size': {'range': [1, 32768], 'cpu_max': 131},
                     'hidden_size': {'range': [1, 32768], 'cpu_max': 129}},
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
               'hidden_size': ['hidden_size', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'linear_weight', 'state': 'linear.weight', 'constant': None},
            {'name': 'linear_bias', 'state': 'linear.bias', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 128, 'input_size': 32768, 'hidden_size': 32768, 'reduced': 32768},
  'bytes': 4311876096,
  'flops': 274877906944},
 {'size': 'small',
  'dims': {'batch_size': 64, 'input_size': 128, 'hidden_size': 128, 'reduced': 128},
  'bytes': 99072,
  'flops': 2097152},
 {'size': 'odd',
  'dims': {'batch_size': 65, 'input_size': 131, 'hidden_size': 129, 'reduced': 131},
  'bytes': 102432,
  'flops': 2196870}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'reduced': 'reduced',
 'sites': [{'factor': 1.0, 'powers': {'input_size': 1}},
           {'factor': 1.0, 'powers': {'hidden_size': 1}}]}

PROBLEM = DrawnProblem('kb2_56_matmul_sigmoid_sum', SOURCE, SPEC, PLAN, DERIVED)


def kb2_56_matmul_sigmoid_sum(
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
