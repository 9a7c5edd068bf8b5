"""kb2_75_gemm_groupnorm_min_biasadd: KernelBench level 2, problem 75 (Gemm_GroupNorm_Min_BiasAdd).

Imported by `kernelgen import kernelbench` from KernelBench/level2/75_Gemm_GroupNorm_Min_BiasAdd.py.

At the problem's own size (batch_size=1024, in_features=8192, out_features=8192, num_groups=512,
  reduced=8192):
- x: ['batch_size', 'in_features'] float32
- bias: [1, 'out_features', 1, 1] float32
- gemm_weight: ['out_features', 'in_features'] float32
- gemm_bias: ['out_features'] float32
- group_norm_weight: ['out_features'] float32
- group_norm_bias: ['out_features'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 1024 -> 64/65, in_features 8192 -> 64/67,
  out_features 8192 -> 128/128, num_groups 512 -> 128/128
Note: no domain: num_groups changes no input's shape, but the sizes scale it

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
    Model that performs a GEMM, Group Normalization, Minimum operation, and Bias addition.
    """
    def __init__(self, in_features, out_features, num_groups, bias_shape):
        super(Model, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = self.gemm(x)
        x = self.group_norm(x)
        x = torch.min(x, dim=1, keepdim=True)[0] 
        x = x + self.bias
        return x

batch_size = 1024
in_features = 8192
out_features = 8192
num_groups = 512
bias_shape = (1, out_features, 1, 1)

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, num_groups, bias_shape]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten addmm, native_group_norm, run on the
#   meta device at 3 sizes)
# - no domain: num_groups changes no input's shape, but the sizes scale it
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_features']},
            {'name': 'bias', 'shape': [1, 'out_features', 1, 1], 'layout_varies': False},
            {'name': 'gemm_weight',
             'shape': ['out_features', 'in_features'],
             'layout_varies': False},
            {'name': 'gemm_bias', 'shape': ['out_features'], 'layout_varies': False},
            {'name': 'group_norm_weight', 'shape': ['out_features'], 'layout_varies': False},
            {'name': 'group_norm_bias', 'shape': ['out_features'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 1024,
                     'in_features': 8192,
                     'out_features': 8192,
                     'num_groups': 512,
                     'reduced': 8192},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64,
                     'in_features': 64,
                     'out_features': 128,
                     'num_groups': 128,
                     'reduced': 64},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65,
                     'in_features': 67,
                     'out_features': 128,
                     'num_groups': 128,
                     'reduced': 67},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 1024,
                     'in_features': 8192,
                     'out_features': 8192,
                     'num_groups': 512,
                     'reduced': 8192},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/75_Gemm_GroupNorm_Min_BiasAdd.py',
            'sha256': '5485a335508d1a92464b644e2be1d166a9072bb0f62d3e2c3426dd4768e06342',
            'level': 2,
            'problem': 75,
            'title': 'Gemm_GroupNorm_Min_BiasAdd',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 1024 -> 64/65, "
                      'in_features 8192 -> 64/67, out_features 8192 -> 128/128, num_groups 512 -> '
                      '128/128',
                      "no domain: num_groups changes no input's shape, but the sizes scale it"]},
 'reduction': 'reduced'}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'in_features': ['in_features', None],
               'out_features': ['out_features', None],
               'num_groups': ['num_groups', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'bias', 'state': 'bias', 'constant': None},
            {'name': 'gemm_weight', 'state': 'gemm.weight', 'constant': None},
            {'name': 'gemm_bias', 'state': 'gemm.bias', 'constant': None},
            {'name': 'group_norm_weight', 'state': 'group_norm.weight', 'constant': 1.0},
            {'name': 'group_norm_bias', 'state': 'group_norm.bias', 'constant': 0.0}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 1024,
           'in_features': 8192,
           'out_features': 8192,
           'num_groups': 512,
           'reduced': 8192},
  'bytes': 335675392,
  'flops': 137438953472},
 {'size': 'small',
  'dims': {'batch_size': 64,
           'in_features': 64,
           'out_features': 128,
           'num_groups': 128,
           'reduced': 64},
  'bytes': 83968,
  'flops': 1048576},
 {'size': 'odd',
  'dims': {'batch_size': 65,
           'in_features': 67,
           'out_features': 128,
           'num_groups': 128,
           'reduced': 67},
  'bytes': 87052,
  'flops': 1114880}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb2_75_gemm_groupnorm_min_biasadd', SOURCE, SPEC, PLAN, DERIVED)


def kb2_75_gemm_groupnorm_min_biasadd(
    x: torch.Tensor,
    bias: torch.Tensor,
    gemm_weight: torch.Tensor,
    gemm_bias: torch.Tensor,
    group_norm_weight: torch.Tensor,
    group_norm_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, bias, gemm_weight, gemm_bias, group_norm_weight, group_norm_bias)


def eager(x, bias, gemm_weight, gemm_bias, group_norm_weight, group_norm_bias):
    return PROBLEM.eager(x, bias, gemm_weight, gemm_bias, group_norm_weight, group_norm_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
