"""kb2_22_matmul_scale_residualadd_clamp_logsumexp_mish: KernelBench level 2, problem 22 (Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish).

Imported by `kernelgen import kernelbench` from KernelBench/level2/22_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish.py.

At the problem's own size (batch_size=1024, input_size=8192, hidden_size=8192, reduced=8192):
- x: ['batch_size', 'input_size'] float32
- matmul_weight: ['hidden_size', 'input_size'] float32
- matmul_bias: ['hidden_size'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 1024 -> 64/65, input_size 8192 -> 128/131,
  hidden_size 8192 -> 128/129
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
    Model that performs a matrix multiplication, scales the result, adds a residual connection, clamps the output,
    applies LogSumExp, and finally applies the Mish activation function.
    """
    def __init__(self, input_size, hidden_size, scale_factor, clamp_min, clamp_max):
        super(Model, self).__init__()
        self.matmul = nn.Linear(input_size, hidden_size)
        self.scale_factor = scale_factor
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        """
        Args:
            x: Input tensor of shape (batch_size, input_size).

        Returns:
            Output tensor of shape (batch_size, hidden_size).
        """
        x = self.matmul(x)
        x = x * self.scale_factor
        x = x + x
        x = torch.clamp(x, self.clamp_min, self.clamp_max)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        x = x * torch.nn.functional.mish(x)  # Mish activation
        return x

batch_size = 1024
input_size = 8192
hidden_size = 8192
scale_factor = 2.0
clamp_min = -10.0
clamp_max = 10.0

def get_inputs():
    return [torch.rand(batch_size, input_size)]

def get_init_inputs():
    return [input_size, hidden_size, scale_factor, clamp_min, clamp_max]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten addmm, logsumexp, run on the meta device
#   at 9 sizes); for a drawn size, the largest of input_size or hidden_size
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset
# - dims: batch_size 1..1024, input_size 1..8192, hidden_size 1..8192 (the least and the blocks
#   each takes, tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'input_size']},
            {'name': 'matmul_weight',
             'shape': ['hidden_size', 'input_size'],
             'layout_varies': False},
            {'name': 'matmul_bias', 'shape': ['hidden_size'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 1024, 'input_size': 8192, 'hidden_size': 8192, 'reduced': 8192},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64, 'input_size': 128, 'hidden_size': 128, 'reduced': 128},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65, 'input_size': 131, 'hidden_size': 129, 'reduced': 131},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 1024, 'input_size': 8192, 'hidden_size': 8192, 'reduced': 8192},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/22_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish.py',
            'sha256': '3ff6a8c5da733c978b3c86bbbba3190e487ae959b63d4501715e60489b6baab9',
            'level': 2,
            'problem': 22,
            'title': 'Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 1024 -> 64/65, "
                      'input_size 8192 -> 128/131, hidden_size 8192 -> 128/129',
                      'domain: batch_size, input_size, hidden_size drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 1024], 'cpu_max': 65},
                     'input_size': {'range': [1, 8192], 'cpu_max': 131},
                     'hidden_size': {'range': [1, 8192], 'cpu_max': 129}},
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
 'params': [{'name': 'matmul_weight', 'state': 'matmul.weight', 'constant': None},
            {'name': 'matmul_bias', 'state': 'matmul.bias', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 1024, 'input_size': 8192, 'hidden_size': 8192, 'reduced': 8192},
  'bytes': 302026752,
  'flops': 137438953472},
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

PROBLEM = DrawnProblem('kb2_22_matmul_scale_residualadd_clamp_logsumexp_mish', SOURCE, SPEC, PLAN, DERIVED)


def kb2_22_matmul_scale_residualadd_clamp_logsumexp_mish(
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
