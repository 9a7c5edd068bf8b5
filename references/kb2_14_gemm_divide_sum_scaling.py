"""kb2_14_gemm_divide_sum_scaling: KernelBench level 2, problem 14 (Gemm_Divide_Sum_Scaling).

Imported by `kernelgen import kernelbench` from KernelBench/level2/14_Gemm_Divide_Sum_Scaling.py.

At the problem's own size (batch_size=1024, input_size=8192, hidden_size=8192, reduced=8192):
- x: ['batch_size', 'input_size'] float32
- weight: ['hidden_size', 'input_size'] float32
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
    Model that performs a matrix multiplication, division, summation, and scaling.
    """
    def __init__(self, input_size, hidden_size, scaling_factor):
        super(Model, self).__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, input_size).
        Returns:
            torch.Tensor: Output tensor of shape (batch_size, hidden_size).
        """
        x = torch.matmul(x, self.weight.T)  # Gemm
        x = x / 2  # Divide
        x = torch.sum(x, dim=1, keepdim=True) # Sum
        x = x * self.scaling_factor  # Scaling
        return x


batch_size   = 1024  
input_size   = 8192  
hidden_size  = 8192 
scaling_factor = 1.5

def get_inputs():
    return [torch.rand(batch_size, input_size)]

def get_init_inputs():
    return [input_size, hidden_size, scaling_factor]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten mm, sum, run on the meta device at 9
#   sizes); for a drawn size, the largest of input_size or hidden_size
# - value families: normal, uniform, small, sorted_up, sorted_down, constant, ties, denormal,
#   neg_inf, specials; not wide (small: 3 of 64 entries off, |err| 0.000452 > atol 7e-05 + rtol
#   1.3e-06*|ref|); large (small: 5 of 64 entries off, |err| 1.41e+06 > atol 7e-05 + rtol
#   1.3e-06*|ref|); spike (small: 4 of 64 entries off, |err| 0.00611 > atol 7e-05 + rtol
#   1.3e-06*|ref|); negative (small: 15 of 64 entries off, |err| 0.0309 > atol 7e-05 + rtol
#   1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset
# - dims: batch_size 1..1024, input_size 1..8192, hidden_size 1..8192 (the least and the blocks
#   each takes, tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'input_size']},
            {'name': 'weight', 'shape': ['hidden_size', 'input_size'], 'layout_varies': False}],
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
            'file': 'KernelBench/level2/14_Gemm_Divide_Sum_Scaling.py',
            'sha256': '8bd6a36d6dafc8916d9b47d413f668fb7a4c25444378717a4c09f495b3891cd2',
            'level': 2,
            'problem': 14,
            'title': 'Gemm_Divide_Sum_Scaling',
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
                      'small',
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
 'params': [{'name': 'weight', 'state': 'weight', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 1024, 'input_size': 8192, 'hidden_size': 8192, 'reduced': 8192},
  'bytes': 301993984,
  'flops': 137438953472},
 {'size': 'small',
  'dims': {'batch_size': 64, 'input_size': 128, 'hidden_size': 128, 'reduced': 128},
  'bytes': 98560,
  'flops': 2097152},
 {'size': 'odd',
  'dims': {'batch_size': 65, 'input_size': 131, 'hidden_size': 129, 'reduced': 131},
  'bytes': 101916,
  'flops': 2196870}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'reduced': 'reduced',
 'sites': [{'factor': 1.0, 'powers': {'input_size': 1}},
           {'factor': 1.0, 'powers': {'hidden_size': 1}}]}

PROBLEM = DrawnProblem('kb2_14_gemm_divide_sum_scaling', SOURCE, SPEC, PLAN, DERIVED)


def kb2_14_gemm_divide_sum_scaling(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(x, weight)


def eager(x, weight):
    return PROBLEM.eager(x, weight)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
