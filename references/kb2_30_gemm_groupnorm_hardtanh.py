"""kb2_30_gemm_groupnorm_hardtanh: KernelBench level 2, problem 30 (Gemm_GroupNorm_Hardtanh).

Imported by `kernelgen import kernelbench` from KernelBench/level2/30_Gemm_GroupNorm_Hardtanh.py.

At the problem's own size (batch_size=1024, in_features=8192, out_features=8192, num_groups=16,
  reduced=8192):
- x: ['batch_size', 'in_features'] float32
- gemm_weight: ['out_features', 'in_features'] float32
- gemm_bias: ['out_features'] float32
- group_norm_weight: ['out_features'] float32
- group_norm_bias: ['out_features'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 1024 -> 64/65, in_features 8192 -> 64/67,
  out_features 8192 -> 128/128
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
    Simple model that performs a GEMM, applies Group Normalization, and then HardTanh.
    """
    def __init__(self, in_features, out_features, num_groups, hardtanh_min, hardtanh_max):
        super(Model, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.hardtanh = nn.Hardtanh(min_val=hardtanh_min, max_val=hardtanh_max)

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, in_features).
        Returns:
            torch.Tensor: Output tensor of shape (batch_size, out_features).
        """
        x = self.gemm(x)
        x = self.group_norm(x)
        x = self.hardtanh(x)
        return x

batch_size = 1024
in_features = 8192
out_features = 8192
num_groups = 16
hardtanh_min = -2.0
hardtanh_max = 2.0

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, num_groups, hardtanh_min, hardtanh_max]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten addmm, native_group_norm, run on the
#   meta device at 9 sizes); for a drawn size, the largest of in_features or 0.0625 *
#   out_features
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset
# - dims: batch_size 2..1024, in_features 1..8192, out_features 16..8192 in blocks of 16 (the
#   least and the blocks each takes, tried on the meta device from the CPU size); kept:
#   num_groups=16
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_features']},
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
                     'num_groups': 16,
                     'reduced': 8192},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64,
                     'in_features': 64,
                     'out_features': 128,
                     'num_groups': 16,
                     'reduced': 64},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65,
                     'in_features': 67,
                     'out_features': 128,
                     'num_groups': 16,
                     'reduced': 67},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 1024,
                     'in_features': 8192,
                     'out_features': 8192,
                     'num_groups': 16,
                     'reduced': 8192},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/30_Gemm_GroupNorm_Hardtanh.py',
            'sha256': '461335ed064d25b193afd8cee6645eb12b37540ce15baa5170f3d61b765d2a90',
            'level': 2,
            'problem': 30,
            'title': 'Gemm_GroupNorm_Hardtanh',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 1024 -> 64/65, "
                      'in_features 8192 -> 64/67, out_features 8192 -> 128/128',
                      'domain: batch_size, in_features, out_features drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [2, 1024], 'cpu_max': 65},
                     'in_features': {'range': [1, 8192], 'cpu_max': 67},
                     'out_features': {'range': [16, 8192], 'cpu_max': 128, 'multiple_of': 16}},
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
               'in_features': ['in_features', None],
               'out_features': ['out_features', None],
               'num_groups': ['num_groups', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'gemm_weight', 'state': 'gemm.weight', 'constant': None},
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
           'num_groups': 16,
           'reduced': 8192},
  'bytes': 335642624,
  'flops': 137438953472},
 {'size': 'small',
  'dims': {'batch_size': 64,
           'in_features': 64,
           'out_features': 128,
           'num_groups': 16,
           'reduced': 64},
  'bytes': 83456,
  'flops': 1048576},
 {'size': 'odd',
  'dims': {'batch_size': 65,
           'in_features': 67,
           'out_features': 128,
           'num_groups': 16,
           'reduced': 67},
  'bytes': 86540,
  'flops': 1114880}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'num_groups': 16},
 'reduced': 'reduced',
 'sites': [{'factor': 1.0, 'powers': {'in_features': 1}},
           {'factor': 0.0625, 'powers': {'out_features': 1}}]}

PROBLEM = DrawnProblem('kb2_30_gemm_groupnorm_hardtanh', SOURCE, SPEC, PLAN, DERIVED)


def kb2_30_gemm_groupnorm_hardtanh(
    x: torch.Tensor,
    gemm_weight: torch.Tensor,
    gemm_bias: torch.Tensor,
    group_norm_weight: torch.Tensor,
    group_norm_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, gemm_weight, gemm_bias, group_norm_weight, group_norm_bias)


def eager(x, gemm_weight, gemm_bias, group_norm_weight, group_norm_bias):
    return PROBLEM.eager(x, gemm_weight, gemm_bias, group_norm_weight, group_norm_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
