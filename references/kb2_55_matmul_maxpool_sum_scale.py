"""kb2_55_matmul_maxpool_sum_scale: KernelBench level 2, problem 55 (Matmul_MaxPool_Sum_Scale).

Imported by `kernelgen import kernelbench` from KernelBench/level2/55_Matmul_MaxPool_Sum_Scale.py.

At the problem's own size (batch_size=128, in_features=32768, out_features=32768, kernel_size=2,
  reduced=32768):
- x: ['batch_size', 'in_features'] float32
- matmul_weight: ['out_features', 'in_features'] float32
- matmul_bias: ['out_features'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 128 -> 64/65, in_features 32768 ->
  128/129, out_features 32768 -> 128/131
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
    Model that performs matrix multiplication, max pooling, sum, and scaling.
    """
    def __init__(self, in_features, out_features, kernel_size, scale_factor):
        super(Model, self).__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.max_pool = nn.MaxPool1d(kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, in_features).

        Returns:
            torch.Tensor: Output tensor of shape (batch_size, out_features).
        """
        x = self.matmul(x)
        x = self.max_pool(x.unsqueeze(1)).squeeze(1)
        x = torch.sum(x, dim=1)
        x = x * self.scale_factor
        return x

batch_size = 128
in_features = 32768
out_features = 32768
kernel_size = 2
scale_factor = 0.5

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, kernel_size, scale_factor]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten addmm, sum, run on the meta device at 9
#   sizes); for a drawn size, the largest of in_features or 1.638e+04
# - value families: normal, uniform, wide, small, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials; not large (reach: 1 of 1 entries off, |err|
#   8.71e+04 > atol 0.00015 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset
# - probed at the CPU sizes and at reach:in_features=32768 (the longest reduction)
# - dims: batch_size 1..128, in_features 1..32768, out_features 2..32768 (the least and the
#   blocks each takes, tried on the meta device from the CPU size); kept: kernel_size=2
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_features']},
            {'name': 'matmul_weight',
             'shape': ['out_features', 'in_features'],
             'layout_varies': False},
            {'name': 'matmul_bias', 'shape': ['out_features'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 128,
                     'in_features': 32768,
                     'out_features': 32768,
                     'kernel_size': 2,
                     'reduced': 32768},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64,
                     'in_features': 128,
                     'out_features': 128,
                     'kernel_size': 2,
                     'reduced': 128},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65,
                     'in_features': 129,
                     'out_features': 131,
                     'kernel_size': 2,
                     'reduced': 129},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 128,
                     'in_features': 32768,
                     'out_features': 32768,
                     'kernel_size': 2,
                     'reduced': 32768},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/55_Matmul_MaxPool_Sum_Scale.py',
            'sha256': 'ef3a425677ff103d6080f3f3eddf89cee25f5b54cfa13777de51bc0ab39b41e6',
            'level': 2,
            'problem': 55,
            'title': 'Matmul_MaxPool_Sum_Scale',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 128 -> 64/65, "
                      'in_features 32768 -> 128/129, out_features 32768 -> 128/131',
                      'domain: batch_size, in_features, out_features drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 128], 'cpu_max': 65},
                     'in_features': {'range': [1, 32768], 'cpu_max': 129},
                     'out_features': {'range': [2, 32768], 'cpu_max': 131}},
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
               'out_features': ['out_features', None],
               'kernel_size': ['kernel_size', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'matmul_weight', 'state': 'matmul.weight', 'constant': None},
            {'name': 'matmul_bias', 'state': 'matmul.bias', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 128,
           'in_features': 32768,
           'out_features': 32768,
           'kernel_size': 2,
           'reduced': 32768},
  'bytes': 4311876096,
  'flops': 274877906944},
 {'size': 'small',
  'dims': {'batch_size': 64,
           'in_features': 128,
           'out_features': 128,
           'kernel_size': 2,
           'reduced': 128},
  'bytes': 99072,
  'flops': 2097152},
 {'size': 'odd',
  'dims': {'batch_size': 65,
           'in_features': 129,
           'out_features': 131,
           'kernel_size': 2,
           'reduced': 129},
  'bytes': 101920,
  'flops': 2196870}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'kernel_size': 2},
 'reduced': 'reduced',
 'sites': [{'factor': 1.0, 'powers': {'in_features': 1}}, {'factor': 16384.0}]}

PROBLEM = DrawnProblem('kb2_55_matmul_maxpool_sum_scale', SOURCE, SPEC, PLAN, DERIVED)


def kb2_55_matmul_maxpool_sum_scale(
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
