"""kb2_84_gemm_batchnorm_scaling_softmax: KernelBench level 2, problem 84 (Gemm_BatchNorm_Scaling_Softmax).

Imported by `kernelgen import kernelbench` from KernelBench/level2/84_Gemm_BatchNorm_Scaling_Softmax.py.

At the problem's own size (batch_size=1024, in_features=8192, out_features=8192, scale_shape_0=1,
  reduced=8192):
- x: ['batch_size', 'in_features'] float32
- scale: [1] float32
- gemm_weight: ['out_features', 'in_features'] float32
- gemm_bias: ['out_features'] float32
- bn_weight: ['out_features'] float32
- bn_bias: ['out_features'] float32
CPU sizes: small, odd.
Note: buffers the forward updates, kept inside the reference: bn.running_mean, bn.running_var,
  bn.num_batches_tracked
Note: CPU sizes scale the module's constants: batch_size 1024 -> 64/65, in_features 8192 -> 64/67,
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
    Model that performs a matrix multiplication (Gemm), Batch Normalization, scaling, and Softmax.
    """
    def __init__(self, in_features, out_features, bn_eps=1e-5, bn_momentum=0.1, scale_shape=(1,)):
        super(Model, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features, eps=bn_eps, momentum=bn_momentum)
        self.scale = nn.Parameter(torch.ones(scale_shape))
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, in_features).
        Returns:
            torch.Tensor: Output tensor of shape (batch_size, out_features).
        """
        x = self.gemm(x)
        x = self.bn(x)
        x = self.scale * x
        x = self.softmax(x)
        return x

batch_size = 1024
in_features = 8192
out_features = 8192
bn_eps = 1e-5
bn_momentum = 0.1
scale_shape = (1,)

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, bn_eps, bn_momentum, scale_shape]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten addmm, native_batch_norm, _softmax, run
#   on the meta device at 9 sizes); for a drawn size, the largest of in_features or batch_size or
#   out_features
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset
# - dims: batch_size 2..1024, in_features 1..8192, out_features 1..8192 (the least and the blocks
#   each takes, tried on the meta device from the CPU size); kept: scale_shape_0=1
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_features']},
            {'name': 'scale', 'shape': [1], 'layout_varies': False},
            {'name': 'gemm_weight',
             'shape': ['out_features', 'in_features'],
             'layout_varies': False},
            {'name': 'gemm_bias', 'shape': ['out_features'], 'layout_varies': False},
            {'name': 'bn_weight', 'shape': ['out_features'], 'layout_varies': False},
            {'name': 'bn_bias', 'shape': ['out_features'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 1024,
                     'in_features': 8192,
                     'out_features': 8192,
                     'scale_shape_0': 1,
                     'reduced': 8192},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64,
                     'in_features': 64,
                     'out_features': 128,
                     'scale_shape_0': 1,
                     'reduced': 128},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65,
                     'in_features': 67,
                     'out_features': 129,
                     'scale_shape_0': 1,
                     'reduced': 129},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 1024,
                     'in_features': 8192,
                     'out_features': 8192,
                     'scale_shape_0': 1,
                     'reduced': 8192},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/84_Gemm_BatchNorm_Scaling_Softmax.py',
            'sha256': 'e6f588ca44598dc81bbd2d626d3c40bda2287a1d1cc644f8afe01b288f1babfe',
            'level': 2,
            'problem': 84,
            'title': 'Gemm_BatchNorm_Scaling_Softmax',
            'convolution': False,
            'cpu': True,
            'notes': ['buffers the forward updates, kept inside the reference: bn.running_mean, '
                      'bn.running_var, bn.num_batches_tracked',
                      "CPU sizes scale the module's constants: batch_size 1024 -> 64/65, "
                      'in_features 8192 -> 64/67, out_features 8192 -> 128/129',
                      'domain: batch_size, in_features, out_features drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [2, 1024], 'cpu_max': 65},
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
                      'specials'],
            'derived': ['reduced']}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'in_features': ['in_features', None],
               'out_features': ['out_features', None],
               'scale_shape_0': ['scale_shape', 0]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'scale', 'state': 'scale', 'constant': 1.0},
            {'name': 'gemm_weight', 'state': 'gemm.weight', 'constant': None},
            {'name': 'gemm_bias', 'state': 'gemm.bias', 'constant': None},
            {'name': 'bn_weight', 'state': 'bn.weight', 'constant': 1.0},
            {'name': 'bn_bias', 'state': 'bn.bias', 'constant': 0.0}],
 'internal': ['bn.running_mean', 'bn.running_var', 'bn.num_batches_tracked']}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 1024,
           'in_features': 8192,
           'out_features': 8192,
           'scale_shape_0': 1,
           'reduced': 8192},
  'bytes': 335642628,
  'flops': 137438953472},
 {'size': 'small',
  'dims': {'batch_size': 64,
           'in_features': 64,
           'out_features': 128,
           'scale_shape_0': 1,
           'reduced': 128},
  'bytes': 83460,
  'flops': 1048576},
 {'size': 'odd',
  'dims': {'batch_size': 65,
           'in_features': 67,
           'out_features': 129,
           'scale_shape_0': 1,
           'reduced': 129},
  'bytes': 87084,
  'flops': 1123590}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'scale_shape_0': 1},
 'reduced': 'reduced',
 'sites': [{'factor': 1.0, 'powers': {'in_features': 1}},
           {'factor': 1.0, 'powers': {'batch_size': 1}},
           {'factor': 1.0, 'powers': {'out_features': 1}}]}

PROBLEM = DrawnProblem('kb2_84_gemm_batchnorm_scaling_softmax', SOURCE, SPEC, PLAN, DERIVED)


def kb2_84_gemm_batchnorm_scaling_softmax(
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
