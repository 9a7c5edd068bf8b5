"""kb2_86_matmul_divide_gelu: KernelBench level 2, problem 86 (Matmul_Divide_GELU).

Imported by `kernelgen import kernelbench` from KernelBench/level2/86_Matmul_Divide_GELU.py.

At the problem's own size (batch_size=1024, input_size=8192, output_size=8192):
- x: ['batch_size', 'input_size'] float32
- linear_weight: ['output_size', 'input_size'] float32
- linear_bias: ['output_size'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 1024 -> 64/65, input_size 8192 -> 64/67,
  output_size 8192 -> 128/129
Note: domain: batch_size, input_size, output_size drawn

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
    A model that performs a matrix multiplication, divides by a scalar, and applies GELU activation.
    """
    def __init__(self, input_size, output_size, divisor):
        super(Model, self).__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, input_size).
        Returns:
            torch.Tensor: Output tensor of shape (batch_size, output_size).
        """
        x = self.linear(x)
        x = x / self.divisor
        x = torch.nn.functional.gelu(x)
        return x

batch_size = 1024
input_size = 8192
output_size = 8192
divisor = 10.0

def get_inputs():
    return [torch.rand(batch_size, input_size)]

def get_init_inputs():
    return [input_size, output_size, divisor]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: input_size, the terms each output sums (aten addmm, run on the meta device at 9
#   sizes)
# - value families: normal, uniform, wide, small, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal; not large (small: 142 of 8192 entries off, |err| 2.14e+03 > atol
#   6e-05 + rtol 1.3e-06*|ref|); neg_inf (small: torch's float32 answer: NaN at [0, 4] where the
#   reference is inf; 463 such entries (output never written there?)); specials (small: torch's
#   float32 answer: NaN at [27, 2] where the reference is inf; 118 such entries (output never
#   written there?))
# - layouts: contiguous, strided, transposed, offset
# - probed at the CPU sizes and at reach:input_size=8192 (the longest reduction)
# - dims: batch_size 1..1024, input_size 1..8192, output_size 1..8192 (the least and the blocks
#   each takes, tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'input_size']},
            {'name': 'linear_weight',
             'shape': ['output_size', 'input_size'],
             'layout_varies': False},
            {'name': 'linear_bias', 'shape': ['output_size'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 1024, 'input_size': 8192, 'output_size': 8192},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64, 'input_size': 64, 'output_size': 128},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65, 'input_size': 67, 'output_size': 129},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 1024, 'input_size': 8192, 'output_size': 8192},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/86_Matmul_Divide_GELU.py',
            'sha256': 'd6fc788bd7aa852d0740320aa786189d89a6489ed9634ee0b28f488d809b335a',
            'level': 2,
            'problem': 86,
            'title': 'Matmul_Divide_GELU',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 1024 -> 64/65, "
                      'input_size 8192 -> 64/67, output_size 8192 -> 128/129',
                      'domain: batch_size, input_size, output_size drawn']},
 'reduction': 'input_size',
 'domain': {'dims': {'batch_size': {'range': [1, 1024], 'cpu_max': 65},
                     'input_size': {'range': [1, 8192], 'cpu_max': 67},
                     'output_size': {'range': [1, 8192], 'cpu_max': 129}},
            'dtypes': ['float32'],
            'layouts': ['contiguous', 'strided', 'transposed', 'offset'],
            'dists': ['normal',
                      'uniform',
                      'wide',
                      'small',
                      'spike',
                      'negative',
                      'sorted_up',
                      'sorted_down',
                      'constant',
                      'ties',
                      'denormal']}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'input_size': ['input_size', None],
               'output_size': ['output_size', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'linear_weight', 'state': 'linear.weight', 'constant': None},
            {'name': 'linear_bias', 'state': 'linear.bias', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 1024, 'input_size': 8192, 'output_size': 8192},
  'bytes': 335577088,
  'flops': 137438953472},
 {'size': 'small',
  'dims': {'batch_size': 64, 'input_size': 64, 'output_size': 128},
  'bytes': 82432,
  'flops': 1048576},
 {'size': 'odd',
  'dims': {'batch_size': 65, 'input_size': 67, 'output_size': 129},
  'bytes': 86048,
  'flops': 1123590}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb2_86_matmul_divide_gelu', SOURCE, SPEC, PLAN, DERIVED)


def kb2_86_matmul_divide_gelu(
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
