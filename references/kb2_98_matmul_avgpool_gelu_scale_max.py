"""kb2_98_matmul_avgpool_gelu_scale_max: KernelBench level 2, problem 98 (Matmul_AvgPool_GELU_Scale_Max).

Imported by `kernelgen import kernelbench` from KernelBench/level2/98_Matmul_AvgPool_GELU_Scale_Max.py.

At the problem's own size (batch_size=1024, in_features=8192, out_features=8192,
  pool_kernel_size=16, reduced=8192):
- x: ['batch_size', 'in_features'] float32
- matmul_weight: ['out_features', 'in_features'] float32
- matmul_bias: ['out_features'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 1024 -> 64/65, in_features 8192 ->
  128/129, out_features 8192 -> 128/131
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
    A model implementing the pattern "Matmul_AvgPool_GELU_Scale_Max".
    """
    def __init__(self, in_features, out_features, pool_kernel_size, scale_factor):
        super(Model, self).__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.avg_pool = nn.AvgPool1d(kernel_size=pool_kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, in_features).

        Returns:
            torch.Tensor: Output tensor of shape (batch_size, out_features).
        """
        x = self.matmul(x)
        x = self.avg_pool(x.unsqueeze(1)).squeeze(1)
        x = torch.nn.functional.gelu(x)
        x = x * self.scale_factor
        x = torch.max(x, dim=1).values
        return x

batch_size = 1024
in_features = 8192
out_features = 8192
pool_kernel_size = 16
scale_factor = 2.0

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, pool_kernel_size, scale_factor]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten addmm, avg_pool2d, run on the meta
#   device at 9 sizes); for a drawn size, the largest of in_features or 16
# - value families: normal, uniform, wide, small, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials; not large (small: 1 of 64 entries off, |err|
#   1.04e+04 > atol 7e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset
# - probed at the CPU sizes and at reach:in_features=8192 (the longest reduction)
# - dims: batch_size 1..1024, in_features 1..8192, out_features 16..8192 (the least and the
#   blocks each takes, tried on the meta device from the CPU size); kept: pool_kernel_size=16
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_features']},
            {'name': 'matmul_weight',
             'shape': ['out_features', 'in_features'],
             'layout_varies': False},
            {'name': 'matmul_bias', 'shape': ['out_features'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 1024,
                     'in_features': 8192,
                     'out_features': 8192,
                     'pool_kernel_size': 16,
                     'reduced': 8192},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64,
                     'in_features': 128,
                     'out_features': 128,
                     'pool_kernel_size': 16,
                     'reduced': 128},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65,
                     'in_features': 129,
                     'out_features': 131,
                     'pool_kernel_size': 16,
                     'reduced': 129},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 1024,
                     'in_features': 8192,
                     'out_features': 8192,
                     'pool_kernel_size': 16,
                     'reduced': 8192},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/98_Matmul_AvgPool_GELU_Scale_Max.py',
            'sha256': '8e5df29ff246f69cde03ab21ab53c706d58cd082014184641332cbb157607eb7',
            'level': 2,
            'problem': 98,
            'title': 'Matmul_AvgPool_GELU_Scale_Max',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 1024 -> 64/65, "
                      'in_features 8192 -> 128/129, out_features 8192 -> 128/131',
                      'domain: batch_size, in_features, out_features drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 1024], 'cpu_max': 65},
                     'in_features': {'range': [1, 8192], 'cpu_max': 129},
                     'out_features': {'range': [16, 8192], 'cpu_max': 131}},
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
               'pool_kernel_size': ['pool_kernel_size', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'matmul_weight', 'state': 'matmul.weight', 'constant': None},
            {'name': 'matmul_bias', 'state': 'matmul.bias', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 1024,
           'in_features': 8192,
           'out_features': 8192,
           'pool_kernel_size': 16,
           'reduced': 8192},
  'bytes': 302026752,
  'flops': 137438953472},
 {'size': 'small',
  'dims': {'batch_size': 64,
           'in_features': 128,
           'out_features': 128,
           'pool_kernel_size': 16,
           'reduced': 128},
  'bytes': 99072,
  'flops': 2097152},
 {'size': 'odd',
  'dims': {'batch_size': 65,
           'in_features': 129,
           'out_features': 131,
           'pool_kernel_size': 16,
           'reduced': 129},
  'bytes': 101920,
  'flops': 2196870}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'fixed': {'pool_kernel_size': 16},
 'reduced': 'reduced',
 'sites': [{'factor': 1.0, 'powers': {'in_features': 1}}, {'factor': 16.0}]}

PROBLEM = DrawnProblem('kb2_98_matmul_avgpool_gelu_scale_max', SOURCE, SPEC, PLAN, DERIVED)


def kb2_98_matmul_avgpool_gelu_scale_max(
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
