"""kb2_41_gemm_batchnorm_gelu_relu: KernelBench level 2, problem 41 (Gemm_BatchNorm_GELU_ReLU).

Imported by `kernelgen import kernelbench` from KernelBench/level2/41_Gemm_BatchNorm_GELU_ReLU.py.

At the problem's own size (batch_size=16384, in_features=4096, out_features=4096, reduced=16384):
- x: ['batch_size', 'in_features'] float32
- gemm_weight: ['out_features', 'in_features'] float32
- gemm_bias: ['out_features'] float32
- batch_norm_weight: ['out_features'] float32
- batch_norm_bias: ['out_features'] float32
CPU sizes: small, odd.
Note: buffers the forward updates, kept inside the reference: batch_norm.running_mean,
  batch_norm.running_var, batch_norm.num_batches_tracked
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
    Model that performs a GEMM, BatchNorm, GELU, and ReLU in sequence.
    """
    def __init__(self, in_features, out_features):
        super(Model, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.batch_norm = nn.BatchNorm1d(out_features)

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, in_features).
        Returns:
            torch.Tensor: Output tensor of shape (batch_size, out_features).
        """
        x = self.gemm(x)
        x = self.batch_norm(x)
        x = torch.nn.functional.gelu(x)
        x = torch.relu(x)
        return x

batch_size = 16384
in_features = 4096
out_features = 4096

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten addmm, native_batch_norm, run on the
#   meta device at 9 sizes); for a drawn size, the largest of in_features or batch_size
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset
# - dims: batch_size 2..16384, in_features 1..4096, out_features 1..4096 (the least and the
#   blocks each takes, tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_features']},
            {'name': 'gemm_weight',
             'shape': ['out_features', 'in_features'],
             'layout_varies': False},
            {'name': 'gemm_bias', 'shape': ['out_features'], 'layout_varies': False},
            {'name': 'batch_norm_weight', 'shape': ['out_features'], 'layout_varies': False},
            {'name': 'batch_norm_bias', 'shape': ['out_features'], 'layout_varies': False}],
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
            'file': 'KernelBench/level2/41_Gemm_BatchNorm_GELU_ReLU.py',
            'sha256': 'e95f261a671d1b5a425ee132a8975f682420c861b97453340131579d212fc7db',
            'level': 2,
            'problem': 41,
            'title': 'Gemm_BatchNorm_GELU_ReLU',
            'convolution': False,
            'cpu': True,
            'notes': ['buffers the forward updates, kept inside the reference: '
                      'batch_norm.running_mean, batch_norm.running_var, '
                      'batch_norm.num_batches_tracked',
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
 'params': [{'name': 'gemm_weight', 'state': 'gemm.weight', 'constant': None},
            {'name': 'gemm_bias', 'state': 'gemm.bias', 'constant': None},
            {'name': 'batch_norm_weight', 'state': 'batch_norm.weight', 'constant': 1.0},
            {'name': 'batch_norm_bias', 'state': 'batch_norm.bias', 'constant': 0.0}],
 'internal': ['batch_norm.running_mean',
              'batch_norm.running_var',
              'batch_norm.num_batches_tracked']}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 16384, 'in_features': 4096, 'out_features': 4096, 'reduced': 16384},
  'bytes': 604028928,
  'flops': 549755813888},
 {'size': 'small',
  'dims': {'batch_size': 64, 'in_features': 64, 'out_features': 128, 'reduced': 64},
  'bytes': 83456,
  'flops': 1048576},
 {'size': 'odd',
  'dims': {'batch_size': 65, 'in_features': 67, 'out_features': 129, 'reduced': 67},
  'bytes': 87080,
  'flops': 1123590}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'reduced': 'reduced',
 'sites': [{'factor': 1.0, 'powers': {'in_features': 1}},
           {'factor': 1.0, 'powers': {'batch_size': 1}}]}

PROBLEM = DrawnProblem('kb2_41_gemm_batchnorm_gelu_relu', SOURCE, SPEC, PLAN, DERIVED)


def kb2_41_gemm_batchnorm_gelu_relu(
    x: torch.Tensor,
    gemm_weight: torch.Tensor,
    gemm_bias: torch.Tensor,
    batch_norm_weight: torch.Tensor,
    batch_norm_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, gemm_weight, gemm_bias, batch_norm_weight, batch_norm_bias)


def eager(x, gemm_weight, gemm_bias, batch_norm_weight, batch_norm_bias):
    return PROBLEM.eager(x, gemm_weight, gemm_bias, batch_norm_weight, batch_norm_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
