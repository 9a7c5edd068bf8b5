"""kb2_70_gemm_sigmoid_scaling_residualadd: KernelBench level 2, problem 70 (Gemm_Sigmoid_Scaling_ResidualAdd).

Imported by `kernelgen import kernelbench` from KernelBench/level2/70_Gemm_Sigmoid_Scaling_ResidualAdd.py.

At the problem's own size (batch_size=1024, input_size=8192, hidden_size=8192):
- x: ['batch_size', 'input_size'] float32
- gemm_weight: ['hidden_size', 'input_size'] float32
- gemm_bias: ['hidden_size'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 1024 -> 64/65, input_size 8192 -> 64/67,
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
    Model implementing the pattern "Gemm_Sigmoid_Scaling_ResidualAdd".
    """
    def __init__(self, input_size, hidden_size, scaling_factor):
        super(Model, self).__init__()
        self.gemm = nn.Linear(input_size, hidden_size)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        """
        Forward pass of the model.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, input_size).

        Returns:
            torch.Tensor: Output tensor of shape (batch_size, hidden_size).
        """
        x = self.gemm(x)
        original_x = x
        x = torch.sigmoid(x)
        x = x * self.scaling_factor
        x = x + original_x
        return x

batch_size = 1024
input_size = 8192
hidden_size = 8192
scaling_factor = 2.0

def get_inputs():
    return [torch.rand(batch_size, input_size)]

def get_init_inputs():
    return [input_size, hidden_size, scaling_factor]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: input_size, the terms each output sums (aten addmm, run on the meta device at 9
#   sizes)
# - value families: normal, uniform, wide, small, spike, sorted_up, sorted_down, constant, ties,
#   denormal, neg_inf, specials; not large (small: 309 of 8192 entries off, |err| 1.22e+04 > atol
#   6e-05 + rtol 1.3e-06*|ref|); negative (small: 3 of 8192 entries off, |err| 0.00014 > atol
#   6e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset
# - probed at the CPU sizes and at reach:input_size=8192 (the longest reduction)
# - dims: batch_size 1..1024, input_size 1..8192, hidden_size 1..8192 (the least and the blocks
#   each takes, tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'input_size']},
            {'name': 'gemm_weight',
             'shape': ['hidden_size', 'input_size'],
             'layout_varies': False},
            {'name': 'gemm_bias', 'shape': ['hidden_size'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 1024, 'input_size': 8192, 'hidden_size': 8192},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64, 'input_size': 64, 'hidden_size': 128},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65, 'input_size': 67, 'hidden_size': 129},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 1024, 'input_size': 8192, 'hidden_size': 8192},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/70_Gemm_Sigmoid_Scaling_ResidualAdd.py',
            'sha256': 'a1544425f96477bad2814578d9ba2d928568d952527af98bd6acbbd0c2170fbc',
            'level': 2,
            'problem': 70,
            'title': 'Gemm_Sigmoid_Scaling_ResidualAdd',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 1024 -> 64/65, "
                      'input_size 8192 -> 64/67, hidden_size 8192 -> 128/129',
                      'domain: batch_size, input_size, hidden_size drawn']},
 'reduction': 'input_size',
 'domain': {'dims': {'batch_size': {'range': [1, 1024], 'cpu_max': 65},
                     'input_size': {'range': [1, 8192], 'cpu_max': 67},
                     'hidden_size': {'range': [1, 8192], 'cpu_max': 129}},
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
               'input_size': ['input_size', None],
               'hidden_size': ['hidden_size', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'gemm_weight', 'state': 'gemm.weight', 'constant': None},
            {'name': 'gemm_bias', 'state': 'gemm.bias', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 1024, 'input_size': 8192, 'hidden_size': 8192},
  'bytes': 335577088,
  'flops': 137438953472},
 {'size': 'small',
  'dims': {'batch_size': 64, 'input_size': 64, 'hidden_size': 128},
  'bytes': 82432,
  'flops': 1048576},
 {'size': 'odd',
  'dims': {'batch_size': 65, 'input_size': 67, 'hidden_size': 129},
  'bytes': 86048,
  'flops': 1123590}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb2_70_gemm_sigmoid_scaling_residualadd', SOURCE, SPEC, PLAN, DERIVED)


def kb2_70_gemm_sigmoid_scaling_residualadd(
    x: torch.Tensor,
    gemm_weight: torch.Tensor,
    gemm_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, gemm_weight, gemm_bias)


def eager(x, gemm_weight, gemm_bias):
    return PROBLEM.eager(x, gemm_weight, gemm_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
