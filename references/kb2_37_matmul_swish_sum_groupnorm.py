"""kb2_37_matmul_swish_sum_groupnorm: KernelBench level 2, problem 37 (Matmul_Swish_Sum_GroupNorm).

Imported by `kernelgen import kernelbench` from KernelBench/level2/37_Matmul_Swish_Sum_GroupNorm.py.

At the problem's own size (batch_size=32768, in_features=1024, out_features=4096, num_groups=64,
  reduced=1024):
- x: ['batch_size', 'in_features'] float32
- bias: ['out_features'] float32
- matmul_weight: ['out_features', 'in_features'] float32
- matmul_bias: ['out_features'] float32
- group_norm_weight: ['out_features'] float32
- group_norm_bias: ['out_features'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 32768 -> 64/65, in_features 1024 -> 64/67,
  out_features 4096 -> 128/128
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
    A model that performs a matrix multiplication, applies Swish activation, sums with a bias term, and normalizes with GroupNorm.
    """
    def __init__(self, in_features, out_features, num_groups, bias_shape):
        super(Model, self).__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.group_norm = nn.GroupNorm(num_groups, out_features)

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, in_features).
        Returns:
            torch.Tensor: Output tensor of shape (batch_size, out_features).
        """
        x = self.matmul(x)
        x = torch.sigmoid(x) * x  # Swish activation
        x = x + self.bias
        x = self.group_norm(x)
        return x

batch_size = 32768
in_features = 1024
out_features = 4096
num_groups = 64
bias_shape = (out_features,)

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, num_groups, bias_shape]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten addmm, native_group_norm, run on the
#   meta device at 9 sizes); for a drawn size, the largest of in_features or 0.01562 *
#   out_features
# - value families: normal, uniform, small, sorted_up, sorted_down, constant, neg_inf; not wide
#   (small: 2 of 8192 entries off, |err| 0.000109 > atol 6e-05 + rtol 1.3e-06*|ref|); large
#   (small: 2 of 8192 entries off, |err| 7.65e-05 > atol 6e-05 + rtol 1.3e-06*|ref|); spike
#   (small: 6 of 8192 entries off, |err| 0.000678 > atol 6e-05 + rtol 1.3e-06*|ref|); negative
#   (small: 1 of 8192 entries off, |err| 7.22e-05 > atol 6e-05 + rtol 1.3e-06*|ref|); ties
#   (small: 2 of 8192 entries off, |err| 6.56e-05 > atol 6e-05 + rtol 1.3e-06*|ref|); denormal
#   (small: 1 of 8192 entries off, |err| 6.75e-05 > atol 6e-05 + rtol 1.3e-06*|ref|); specials
#   (small: 1 of 8192 entries off, |err| 6.45e-05 > atol 6e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset
# - dims: batch_size 1..32768, in_features 1..1024, out_features 128..4096 in blocks of 128 (the
#   least and the blocks each takes, tried on the meta device from the CPU size); kept:
#   num_groups=64
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_features']},
            {'name': 'bias', 'shape': ['out_features'], 'layout_varies': False},
            {'name': 'matmul_weight',
             'shape': ['out_features', 'in_features'],
             'layout_varies': False},
            {'name': 'matmul_bias', 'shape': ['out_features'], 'layout_varies': False},
            {'name': 'group_norm_weight', 'shape': ['out_features'], 'layout_varies': False},
            {'name': 'group_norm_bias', 'shape': ['out_features'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 32768,
                     'in_features': 1024,
                     'out_features': 4096,
                     'num_groups': 64,
                     'reduced': 1024},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64,
                     'in_features': 64,
                     'out_features': 128,
                     'num_groups': 64,
                     'reduced': 64},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65,
                     'in_features': 67,
                     'out_features': 128,
                     'num_groups': 64,
                     'reduced': 67},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 32768,
                     'in_features': 1024,
                     'out_features': 4096,
                     'num_groups': 64,
                     'reduced': 1024},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/37_Matmul_Swish_Sum_GroupNorm.py',
            'sha256': 'fe2e8dc5418f1549cb3b6e34535b6f3dee0fc37ecce1b6be19a57ed8733156d4',
            'level': 2,
            'problem': 37,
            'title': 'Matmul_Swish_Sum_GroupNorm',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 32768 -> 64/65, "
                      'in_features 1024 -> 64/67, out_features 4096 -> 128/128',
                      'domain: batch_size, in_features, out_features drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 32768], 'cpu_max': 65},
                     'in_features': {'range': [1, 1024], 'cpu_max': 67},
                     'out_features': {'range': [128, 4096], 'cpu_max': 128, 'multiple_of': 128}},
            'dtypes': ['float32'],
            'layouts': ['contiguous', 'strided', 'transposed', 'offset'],
            'dists': ['normal',
                      'uniform',
                      'small',
                      'sorted_up',
                      'sorted_down',
                      'constant',
                      'neg_inf'],
            'derived': ['reduced']}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'in_features': ['in_features', None],
               'out_features': ['out_features', None],
               'num_groups': ['num_groups', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'bias', 'state': 'bias', 'constant': None},
            {'name': 'matmul_weight', 'state': 'matmul.weight', 'constant': None},
            {'name': 'matmul_bias', 'state': 'matmul.bias', 'constant': None},
            {'name': 'group_norm_weight', 'state': 'group_norm.weight', 'constant': 1.0},
            {'name': 'group_norm_bias', 'state': 'group_norm.bias', 'constant': 0.0}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 32768,
           'in_features': 1024,
           'out_features': 4096,
           'num_groups': 64,
           'reduced': 1024},
  'bytes': 687931392,
  'flops': 274877906944},
 {'size': 'small',
  'dims': {'batch_size': 64,
           'in_features': 64,
           'out_features': 128,
           'num_groups': 64,
           'reduced': 64},
  'bytes': 83968,
  'flops': 1048576},
 {'size': 'odd',
  'dims': {'batch_size': 65,
           'in_features': 67,
           'out_features': 128,
           'num_groups': 64,
           'reduced': 67},
  'bytes': 87052,
  'flops': 1114880}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'num_groups': 64},
 'reduced': 'reduced',
 'sites': [{'factor': 1.0, 'powers': {'in_features': 1}},
           {'factor': 0.015625, 'powers': {'out_features': 1}}]}

PROBLEM = DrawnProblem('kb2_37_matmul_swish_sum_groupnorm', SOURCE, SPEC, PLAN, DERIVED)


def kb2_37_matmul_swish_sum_groupnorm(
    x: torch.Tensor,
    bias: torch.Tensor,
    matmul_weight: torch.Tensor,
    matmul_bias: torch.Tensor,
    group_norm_weight: torch.Tensor,
    group_norm_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, bias, matmul_weight, matmul_bias, group_norm_weight, group_norm_bias)


def eager(x, bias, matmul_weight, matmul_bias, group_norm_weight, group_norm_bias):
    return PROBLEM.eager(x, bias, matmul_weight, matmul_bias, group_norm_weight, group_norm_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
