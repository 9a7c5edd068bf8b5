"""kb2_53_gemm_scaling_hardtanh_gelu: KernelBench level 2, problem 53 (Gemm_Scaling_Hardtanh_GELU).

Imported by `kernelgen import kernelbench` from KernelBench/level2/53_Gemm_Scaling_Hardtanh_GELU.py.

At the problem's own size (batch_size=2048, in_features=8192, out_features=8192, hardtanh_min=-2,
  hardtanh_max=2):
- x: ['batch_size', 'in_features'] float32
- gemm_weight: ['out_features', 'in_features'] float32
- gemm_bias: ['out_features'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 2048 -> 64/65, in_features 8192 -> 64/67,
  out_features 8192 -> 128/129
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
    Model that performs a GEMM, scaling, hardtanh, and GELU activation.
    """
    def __init__(self, in_features, out_features, scaling_factor, hardtanh_min, hardtanh_max):
        super(Model, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor
        self.hardtanh = nn.Hardtanh(min_val=hardtanh_min, max_val=hardtanh_max)
        self.gelu = nn.GELU()

    def forward(self, x):
        x = self.gemm(x)
        x = x * self.scaling_factor
        x = self.hardtanh(x)
        x = self.gelu(x)
        return x

batch_size = 2048
in_features = 8192
out_features = 8192
scaling_factor = 0.5
hardtanh_min = -2
hardtanh_max = 2

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, scaling_factor, hardtanh_min, hardtanh_max]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: in_features, the terms each output sums (aten addmm, run on the meta device at 9
#   sizes)
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset
# - probed at the CPU sizes and at reach:in_features=8192 (the longest reduction)
# - dims: batch_size 1..2048, in_features 1..8192, out_features 1..8192 (the least and the blocks
#   each takes, tried on the meta device from the CPU size); kept: hardtanh_min=-2,
#   hardtanh_max=2
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_features']},
            {'name': 'gemm_weight',
             'shape': ['out_features', 'in_features'],
             'layout_varies': False},
            {'name': 'gemm_bias', 'shape': ['out_features'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 2048,
                     'in_features': 8192,
                     'out_features': 8192,
                     'hardtanh_min': -2,
                     'hardtanh_max': 2},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64,
                     'in_features': 64,
                     'out_features': 128,
                     'hardtanh_min': -2,
                     'hardtanh_max': 2},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65,
                     'in_features': 67,
                     'out_features': 129,
                     'hardtanh_min': -2,
                     'hardtanh_max': 2},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 2048,
                     'in_features': 8192,
                     'out_features': 8192,
                     'hardtanh_min': -2,
                     'hardtanh_max': 2},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/53_Gemm_Scaling_Hardtanh_GELU.py',
            'sha256': 'd296d0b49a0a620b3528506997f600dd7c5635551a13c95b418428bbed50010e',
            'level': 2,
            'problem': 53,
            'title': 'Gemm_Scaling_Hardtanh_GELU',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 2048 -> 64/65, "
                      'in_features 8192 -> 64/67, out_features 8192 -> 128/129',
                      'domain: batch_size, in_features, out_features drawn']},
 'reduction': 'in_features',
 'domain': {'dims': {'batch_size': {'range': [1, 2048], 'cpu_max': 65},
                     'in_features': {'range': [1, 8192], 'cpu_max': 67},
                     'out_features': {'range': [1, 8192], 'cpu_max': 129}},
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
                      'specials']}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'in_features': ['in_features', None],
               'out_features': ['out_features', None],
               'hardtanh_min': ['hardtanh_min', None],
               'hardtanh_max': ['hardtanh_max', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'gemm_weight', 'state': 'gemm.weight', 'constant': None},
            {'name': 'gemm_bias', 'state': 'gemm.bias', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 2048,
           'in_features': 8192,
           'out_features': 8192,
           'hardtanh_min': -2,
           'hardtanh_max': 2},
  'bytes': 402685952,
  'flops': 274877906944},
 {'size': 'small',
  'dims': {'batch_size': 64,
           'in_features': 64,
           'out_features': 128,
           'hardtanh_min': -2,
           'hardtanh_max': 2},
  'bytes': 82432,
  'flops': 1048576},
 {'size': 'odd',
  'dims': {'batch_size': 65,
           'in_features': 67,
           'out_features': 129,
           'hardtanh_min': -2,
           'hardtanh_max': 2},
  'bytes': 86048,
  'flops': 1123590}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'hardtanh_min': -2, 'hardtanh_max': 2}}

PROBLEM = DrawnProblem('kb2_53_gemm_scaling_hardtanh_gelu', SOURCE, SPEC, PLAN, DERIVED)


def kb2_53_gemm_scaling_hardtanh_gelu(
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
