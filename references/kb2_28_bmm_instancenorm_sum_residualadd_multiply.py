"""kb2_28_bmm_instancenorm_sum_residualadd_multiply: KernelBench level 2, problem 28 (BMM_InstanceNorm_Sum_ResidualAdd_Multiply).

Imported by `kernelgen import kernelbench` from KernelBench/level2/28_BMM_InstanceNorm_Sum_ResidualAdd_Multiply.py.

At the problem's own size (batch_size=1024, in_features=8192, out_features=8192, reduced=8192):
- x: ['batch_size', 'in_features'] float32
- y: ['batch_size', 'out_features'] float32
- bmm_weight: ['out_features', 'in_features'] float32
- bmm_bias: ['out_features'] float32
CPU sizes: small, odd.
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
    Model that performs a batch matrix multiplication, instance normalization, summation, residual addition, and multiplication.
    """
    def __init__(self, in_features, out_features, eps=1e-5, momentum=0.1):
        super(Model, self).__init__()
        self.bmm = nn.Linear(in_features, out_features)
        self.instance_norm = nn.InstanceNorm2d(out_features, eps=eps, momentum=momentum)

    def forward(self, x, y):
        """
        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, in_features).
            y (torch.Tensor): Input tensor of shape (batch_size, out_features).

        Returns:
            torch.Tensor: Output tensor of shape (batch_size, out_features).
        """
        x = self.bmm(x)
        x = self.instance_norm(x.unsqueeze(1).unsqueeze(1)).squeeze(1).squeeze(1)
        x = x + y
        x = x * y
        return x

batch_size = 1024  # Increased batch size
in_features = 8192  # Increased input features
out_features = 8192  # Increased output features

def get_inputs():
    return [torch.rand(batch_size, in_features), torch.rand(batch_size, out_features)]

def get_init_inputs():
    return [in_features, out_features]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten addmm, native_batch_norm, run on the
#   meta device at 9 sizes); for a drawn size, the largest of in_features or out_features
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials
# - layouts: contiguous, strided, transposed, offset
# - dims: batch_size 1..1024, in_features 1..8192, out_features 2..8192 (the least and the blocks
#   each takes, tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_features']},
            {'name': 'y', 'shape': ['batch_size', 'out_features']},
            {'name': 'bmm_weight',
             'shape': ['out_features', 'in_features'],
             'layout_varies': False},
            {'name': 'bmm_bias', 'shape': ['out_features'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 1024,
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
            'dims': {'batch_size': 1024,
                     'in_features': 8192,
                     'out_features': 8192,
                     'reduced': 8192},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/28_BMM_InstanceNorm_Sum_ResidualAdd_Multiply.py',
            'sha256': '5ed41cc50c8b2dfe65d03e642cc471dc3ad7cf6858608c65b911c235946ef00e',
            'level': 2,
            'problem': 28,
            'title': 'BMM_InstanceNorm_Sum_ResidualAdd_Multiply',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 1024 -> 64/65, "
                      'in_features 8192 -> 64/67, out_features 8192 -> 128/129',
                      'domain: batch_size, in_features, out_features drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 1024], 'cpu_max': 65},
                     'in_features': {'range': [1, 8192], 'cpu_max': 67},
                     'out_features': {'range': [2, 8192], 'cpu_max': 129}},
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
 'inputs': [{'name': 'x', 'draw': 'judge'}, {'name': 'y', 'draw': 'judge'}],
 'params': [{'name': 'bmm_weight', 'state': 'bmm.weight', 'constant': None},
            {'name': 'bmm_bias', 'state': 'bmm.bias', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 1024, 'in_features': 8192, 'out_features': 8192, 'reduced': 8192},
  'bytes': 369131520,
  'flops': 137438953472},
 {'size': 'small',
  'dims': {'batch_size': 64, 'in_features': 64, 'out_features': 128, 'reduced': 128},
  'bytes': 115200,
  'flops': 1048576},
 {'size': 'odd',
  'dims': {'batch_size': 65, 'in_features': 67, 'out_features': 129, 'reduced': 129},
  'bytes': 119588,
  'flops': 1123590}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'reduced': 'reduced',
 'sites': [{'factor': 1.0, 'powers': {'in_features': 1}},
           {'factor': 1.0, 'powers': {'out_features': 1}}]}

PROBLEM = DrawnProblem('kb2_28_bmm_instancenorm_sum_residualadd_multiply', SOURCE, SPEC, PLAN, DERIVED)


def kb2_28_bmm_instancenorm_sum_residualadd_multiply(
    x: torch.Tensor,
    y: torch.Tensor,
    bmm_weight: torch.Tensor,
    bmm_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, y, bmm_weight, bmm_bias)


def eager(x, y, bmm_weight, bmm_bias):
    return PROBLEM.eager(x, y, bmm_weight, bmm_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
