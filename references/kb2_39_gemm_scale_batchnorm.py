"""kb2_39_gemm_scale_batchnorm: KernelBench level 2, problem 39 (Gemm_Scale_BatchNorm).

Imported by `kernelgen import kernelbench` from KernelBench/level2/39_Gemm_Scale_BatchNorm.py.

At the problem's own size (batch_size=16384, in_features=4096, out_features=4096, reduced=16384):
- x: ['batch_size', 'in_features'] float32
- scale: ['out_features'] float32
- gemm_weight: ['out_features', 'in_features'] float32
- gemm_bias: ['out_features'] float32
- bn_weight: ['out_features'] float32
- bn_bias: ['out_features'] float32
CPU sizes: small, odd.
Note: buffers the forward updates, kept inside the reference: bn.running_mean, bn.running_var,
  bn.num_batches_tracked
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
    Simple model that performs a matrix multiplication, scales the result, and applies batch normalization.
    """
    def __init__(self, in_features, out_features, scale_shape, eps=1e-5, momentum=0.1):
        super(Model, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.randn(scale_shape))
        self.bn = nn.BatchNorm1d(out_features, eps=eps, momentum=momentum)

    def forward(self, x):
        x = self.gemm(x)
        x = x * self.scale
        x = self.bn(x)
        return x

batch_size = 16384
in_features = 4096
out_features = 4096
scale_shape = (out_features,)

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, scale_shape]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten addmm, native_batch_norm, run on the
#   meta device at 9 sizes); for a drawn size, the largest of in_features or batch_size
# - value families: normal, uniform, wide, small, large, spike, sorted_up, sorted_down, constant,
#   ties, denormal, neg_inf, specials; not negative (odd: 1 of 8385 entries off, |err| 8.63e-05 >
#   atol 6.1e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset
# - dims: batch_size 2..16384, in_features 1..4096, out_features 1..4096 (the least and the
#   blocks each takes, tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_features']},
            {'name': 'scale', 'shape': ['out_features'], 'layout_varies': False},
            {'name': 'gemm_weight',
             'shape': ['out_features', 'in_features'],
             'layout_varies': False},
            {'name': 'gemm_bias', 'shape': ['out_features'], 'layout_varies': False},
            {'name': 'bn_weight', 'shape': ['out_features'], 'layout_varies': False},
            {'name': 'bn_bias', 'shape': ['out_features'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 16384,
                     'in_features': 4096,
                     'out_features': 4096,
                     'reduced': 16384},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64, 'in_features': 64, 'out_features': 128, 'reduced': 64},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65, 'in_features': 67, 'out_features': 129, 'reduced': 67},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 16384,
                     'in_features': 4096,
                     'out_features': 4096,
                     'reduced': 16384},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/39_Gemm_Scale_BatchNorm.py',
            'sha256': '6f7733e04363f470d27a26eadc7c8ab7b94e9c9a4efc3066e42c4e0df4e53e6f',
            'level': 2,
            'problem': 39,
            'title': 'Gemm_Scale_BatchNorm',
            'convolution': False,
            'cpu': True,
            'notes': ['buffers the forward updates, kept inside the reference: bn.running_mean, '
                      'bn.running_var, bn.num_batches_tracked',
                      "CPU sizes scale the module's constants: batch_size 16384 -> 64/65, "
                      'in_features 4096 -> 64/67, out_features 4096 -> 128/129',
                      'domain: batch_size, in_features, out_features drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [2, 16384], 'cpu_max': 65},
                     'in_features': {'range': [1, 4096], 'cpu_max': 67},
                     'out_features': {'range': [1, 4096], 'cpu_max': 129}},
            'dtypes': ['float32'],
            'layouts': ['contiguous', 'strided', 'transposed', 'offset'],
            'dists': ['normal',
                      'uniform',
                      'wide',
                      'small',
                      'large',
                      'spike',
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
 'params': [{'name': 'scale', 'state': 'scale', 'constant': None},
            {'name': 'gemm_weight', 'state': 'gemm.weight', 'constant': None},
            {'name': 'gemm_bias', 'state': 'gemm.bias', 'constant': None},
            {'name': 'bn_weight', 'state': 'bn.weight', 'constant': 1.0},
            {'name': 'bn_bias', 'state': 'bn.bias', 'constant': 0.0}],
 'internal': ['bn.running_mean', 'bn.running_var', 'bn.num_batches_tracked']}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 16384, 'in_features': 4096, 'out_features': 4096, 'reduced': 16384},
  'bytes': 604045312,
  'flops': 549755813888},
 {'size': 'small',
  'dims': {'batch_size': 64, 'in_features': 64, 'out_features': 128, 'reduced': 64},
  'bytes': 83968,
  'flops': 1048576},
 {'size': 'odd',
  'dims': {'batch_size': 65, 'in_features': 67, 'out_features': 129, 'reduced': 67},
  'bytes': 87596,
  'flops': 1123590}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'reduced': 'reduced',
 'sites': [{'factor': 1.0, 'powers': {'in_features': 1}},
           {'factor': 1.0, 'powers': {'batch_size': 1}}]}

PROBLEM = DrawnProblem('kb2_39_gemm_scale_batchnorm', SOURCE, SPEC, PLAN, DERIVED)


def kb2_39_gemm_scale_batchnorm(
    x: torch.Tensor,
    scale: torch.Tensor,
    gemm_weight: torch.Tensor,
    gemm_bias: torch.Tensor,
    bn_weight: torch.Tensor,
    bn_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, scale, gemm_weight, gemm_bias, bn_weight, bn_bias)


def eager(x, scale, gemm_weight, gemm_bias, bn_weight, bn_bias):
    return PROBLEM.eager(x, scale, gemm_weight, gemm_bias, bn_weight, bn_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
