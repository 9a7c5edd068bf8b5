"""kb2_94_gemm_biasadd_hardtanh_mish_groupnorm: KernelBench level 2, problem 94 (Gemm_BiasAdd_Hardtanh_Mish_GroupNorm).

Imported by `kernelgen import kernelbench` from KernelBench/level2/94_Gemm_BiasAdd_Hardtanh_Mish_GroupNorm.py.

At the problem's own size (batch_size=1024, in_features=8192, out_features=8192, num_groups=256,
  reduced=8192):
- x: ['batch_size', 'in_features'] float32
- bias: ['out_features'] float32
- gemm_weight: ['out_features', 'in_features'] float32
- gemm_bias: ['out_features'] float32
- groupnorm_weight: ['out_features'] float32
- groupnorm_bias: ['out_features'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 1024 -> 64/65, in_features 8192 -> 64/67,
  out_features 8192 -> 128/128, num_groups 256 -> 128/128
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
    A model that performs a GEMM, BiasAdd, Hardtanh, Mish, and GroupNorm operations in sequence.
    """
    def __init__(self, in_features, out_features, bias_shape, num_groups):
        super(Model, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.hardtanh = nn.Hardtanh()
        self.mish = nn.Mish()
        self.groupnorm = nn.GroupNorm(num_groups=num_groups, num_channels=out_features)

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, in_features).
        Returns:
            torch.Tensor: Output tensor of shape (batch_size, out_features).
        """
        x = self.gemm(x)
        x = x + self.bias
        x = self.hardtanh(x)
        x = self.mish(x)
        x = self.groupnorm(x)
        return x


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)
num_groups = 256

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, bias_shape, num_groups]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten addmm, native_group_norm, run on the
#   meta device at 3 sizes)
# - no domain: num_groups changes no input's shape, but the sizes scale it
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_features']},
            {'name': 'bias', 'shape': ['out_features'], 'layout_varies': False},
            {'name': 'gemm_weight',
             'shape': ['out_features', 'in_features'],
             'layout_varies': False},
            {'name': 'gemm_bias', 'shape': ['out_features'], 'layout_varies': False},
            {'name': 'groupnorm_weight', 'shape': ['out_features'], 'layout_varies': False},
            {'name': 'groupnorm_bias', 'shape': ['out_features'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 1024,
                     'in_features': 8192,
                     'out_features': 8192,
                     'num_groups': 256,
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
                     'num_groups': 256,
                     'reduced': 8192},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/94_Gemm_BiasAdd_Hardtanh_Mish_GroupNorm.py',
            'sha256': '649fe2a6aaefeffcd6209c6afb873586c35751756585a9c1a7ab2a11a546c8d3',
            'level': 2,
            'problem': 94,
            'title': 'Gemm_BiasAdd_Hardtanh_Mish_GroupNorm',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 1024 -> 64/65, "
                      'in_features 8192 -> 64/67, out_features 8192 -> 128/128, num_groups 256 -> '
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
            {'name': 'groupnorm_weight', 'state': 'groupnorm.weight', 'constant': 1.0},
            {'name': 'groupnorm_bias', 'state': 'groupnorm.bias', 'constant': 0.0}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 1024,
           'in_features': 8192,
           'out_features': 8192,
           'num_groups': 256,
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

PROBLEM = DrawnProblem('kb2_94_gemm_biasadd_hardtanh_mish_groupnorm', SOURCE, SPEC, PLAN, DERIVED)


def kb2_94_gemm_biasadd_hardtanh_mish_groupnorm(
    x: torch.Tensor,
    bias: torch.Tensor,
    gemm_weight: torch.Tensor,
    gemm_bias: torch.Tensor,
    groupnorm_weight: torch.Tensor,
    groupnorm_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, bias, gemm_weight, gemm_bias, groupnorm_weight, groupnorm_bias)


def eager(x, bias, gemm_weight, gemm_bias, groupnorm_weight, groupnorm_bias):
    return PROBLEM.eager(x, bias, gemm_weight, gemm_bias, groupnorm_weight, groupnorm_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
