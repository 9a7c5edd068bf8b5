"""kb2_51_gemm_subtract_globalavgpool_logsumexp_gelu_residualadd: KernelBench level 2, problem 51 (Gemm_Subtract_GlobalAvgPool_LogSumExp_GELU_ResidualAdd).

Imported by `kernelgen import kernelbench` from KernelBench/level2/51_Gemm_Subtract_GlobalAvgPool_LogSumExp_GELU_ResidualAdd.py.

At the problem's own size (batch_size=2048, in_features=8192, out_features=8192, reduced=8192):
- x: ['batch_size', 'in_features'] float32
- subtract: ['out_features'] float32
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
    Model that performs a series of operations: Gemm, Subtract, GlobalAvgPool, LogSumExp, GELU, and ResidualAdd.
    """
    def __init__(self, in_features, out_features, bias=True):
        super(Model, self).__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=bias)
        self.subtract = nn.Parameter(torch.randn(out_features))

    def forward(self, x):
        original_x = x.clone().detach()
        # Gemm
        x = self.gemm(x)

        # Subtract
        x = x - self.subtract

        # GlobalAvgPool
        x = torch.mean(x, dim=1, keepdim=True)

        # LogSumExp
        x = torch.logsumexp(x, dim=1, keepdim=True)

        # GELU
        x = torch.nn.functional.gelu(x)

        # ResidualAdd
        x = x + original_x

        return x

batch_size = 2048
in_features = 8192
out_features = 8192

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten addmm, mean, logsumexp, run on the meta
#   device at 9 sizes); for a drawn size, the largest of in_features or out_features or 1
# - value families: normal, uniform, wide, small, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials; not large (small: 85 of 4096 entries off, |err|
#   920 > atol 7e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset
# - dims: batch_size 1..2048, in_features 1..8192, out_features 1..8192 (the least and the blocks
#   each takes, tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_features']},
            {'name': 'subtract', 'shape': ['out_features'], 'layout_varies': False},
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
                     'reduced': 8192},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64, 'in_features': 64, 'out_features': 128, 'reduced': 128},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65, 'in_features': 67, 'out_features': 129, 'reduced': 129},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 2048,
                     'in_features': 8192,
                     'out_features': 8192,
                     'reduced': 8192},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/51_Gemm_Subtract_GlobalAvgPool_LogSumExp_GELU_ResidualAdd.py',
            'sha256': '0a777c0d54e91a3a20d5cc2781e1678b90e4fcda8ed2c1f5e33009e010792b03',
            'level': 2,
            'problem': 51,
            'title': 'Gemm_Subtract_GlobalAvgPool_LogSumExp_GELU_ResidualAdd',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 2048 -> 64/65, "
                      'in_features 8192 -> 64/67, out_features 8192 -> 128/129',
                      'domain: batch_size, in_features, out_features drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 2048], 'cpu_max': 65},
                     'in_features': {'range': [1, 8192], 'cpu_max': 67},
                     'out_features': {'range': [1, 8192], 'cpu_max': 129}},
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
                      'denormal',
                      'neg_inf',
                      'specials'],
            'derived': ['reduced']}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'in_features': ['in_features', None],
               'out_features': ['out_features', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'subtract', 'state': 'subtract', 'constant': None},
            {'name': 'gemm_weight', 'state': 'gemm.weight', 'constant': None},
            {'name': 'gemm_bias', 'state': 'gemm.bias', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 2048, 'in_features': 8192, 'out_features': 8192, 'reduced': 8192},
  'bytes': 402718720,
  'flops': 274877906944},
 {'size': 'small',
  'dims': {'batch_size': 64, 'in_features': 64, 'out_features': 128, 'reduced': 128},
  'bytes': 66560,
  'flops': 1048576},
 {'size': 'odd',
  'dims': {'batch_size': 65, 'in_features': 67, 'out_features': 129, 'reduced': 129},
  'bytes': 70444,
  'flops': 1123590}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'reduced': 'reduced',
 'sites': [{'factor': 1.0, 'powers': {'in_features': 1}},
           {'factor': 1.0, 'powers': {'out_features': 1}},
           {'factor': 1.0}]}

PROBLEM = DrawnProblem('kb2_51_gemm_subtract_globalavgpool_logsumexp_gelu_residualadd', SOURCE, SPEC, PLAN, DERIVED)


def kb2_51_gemm_subtract_globalavgpool_logsumexp_gelu_residualadd(
    x: torch.Tensor,
    subtract: torch.Tensor,
    gemm_weight: torch.Tensor,
    gemm_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, subtract, gemm_weight, gemm_bias)


def eager(x, subtract, gemm_weight, gemm_bias):
    return PROBLEM.eager(x, subtract, gemm_weight, gemm_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
