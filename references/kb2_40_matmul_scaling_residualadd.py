"""kb2_40_matmul_scaling_residualadd: KernelBench level 2, problem 40 (Matmul_Scaling_ResidualAdd).

Imported by `kernelgen import kernelbench` from KernelBench/level2/40_Matmul_Scaling_ResidualAdd.py.

At the problem's own size (batch_size=16384, in_features=4096, out_features=4096):
- x: ['batch_size', 'in_features'] float32
- matmul_weight: ['out_features', 'in_features'] float32
- matmul_bias: ['out_features'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 16384 -> 64/65, in_features 4096 -> 64/67,
  out_features 4096 -> 128/129
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
    A model that performs a matrix multiplication, scaling, and residual addition.

    Args:
        in_features (int): Number of input features.
        out_features (int): Number of output features.
        scaling_factor (float): Scaling factor to apply after matrix multiplication.
    """
    def __init__(self, in_features, out_features, scaling_factor):
        super(Model, self).__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        """
        Forward pass of the model.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, in_features).

        Returns:
            torch.Tensor: Output tensor of shape (batch_size, out_features).
        """
        x = self.matmul(x)
        original_x = x.clone().detach()
        x = x * self.scaling_factor
        x = x + original_x
        return x

batch_size = 16384
in_features = 4096
out_features = 4096
scaling_factor = 0.5

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, scaling_factor]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: in_features, the terms each output sums (aten addmm, run on the meta device at 9
#   sizes)
# - value families: normal, uniform, wide, small, spike, sorted_up, sorted_down, constant, ties,
#   denormal, neg_inf, specials; not large (small: 279 of 8192 entries off, |err| 3.3e+03 > atol
#   6e-05 + rtol 1.3e-06*|ref|); negative (small: 2 of 8192 entries off, |err| 8.96e-05 > atol
#   6e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset
# - probed at the CPU sizes and at reach:in_features=4096 (the longest reduction)
# - dims: batch_size 1..16384, in_features 1..4096, out_features 1..4096 (the least and the
#   blocks each takes, tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_features']},
            {'name': 'matmul_weight',
             'shape': ['out_features', 'in_features'],
             'layout_varies': False},
            {'name': 'matmul_bias', 'shape': ['out_features'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 16384, 'in_features': 4096, 'out_features': 4096},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64, 'in_features': 64, 'out_features': 128},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65, 'in_features': 67, 'out_features': 129},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 16384, 'in_features': 4096, 'out_features': 4096},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/40_Matmul_Scaling_ResidualAdd.py',
            'sha256': '333bf992fd77297a4c43f4287b44662dcc43c8036be69d486b28e7a9db7bffd5',
            'level': 2,
            'problem': 40,
            'title': 'Matmul_Scaling_ResidualAdd',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 16384 -> 64/65, "
                      'in_features 4096 -> 64/67, out_features 4096 -> 128/129',
                      'domain: batch_size, in_features, out_features drawn']},
 'reduction': 'in_features',
 'domain': {'dims': {'batch_size': {'range': [1, 16384], 'cpu_max': 65},
                     'in_features': {'range': [1, 4096], 'cpu_max': 67},
                     'out_features': {'range': [1, 4096], 'cpu_max': 129}},
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
  'dims': {'batch_size': 16384, 'in_features': 4096, 'out_features': 4096},
  'bytes': 603996160,
  'flops': 549755813888},
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

PROBLEM = DrawnProblem('kb2_40_matmul_scaling_residualadd', SOURCE, SPEC, PLAN, DERIVED)


def kb2_40_matmul_scaling_residualadd(
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
