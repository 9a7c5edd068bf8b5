"""kb2_62_matmul_groupnorm_leakyrelu_sum: KernelBench level 2, problem 62 (Matmul_GroupNorm_LeakyReLU_Sum).

Imported by `kernelgen import kernelbench` from KernelBench/level2/62_Matmul_GroupNorm_LeakyReLU_Sum.py.

At the problem's own size (batch_size=1024, input_size=8192, hidden_size=8192, num_groups=512,
  reduced=8192):
- x: ['batch_size', 'input_size'] float32
- fc_weight: ['hidden_size', 'input_size'] float32
- fc_bias: ['hidden_size'] float32
- gn_weight: ['hidden_size'] float32
- gn_bias: ['hidden_size'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 1024 -> 64/65, input_size 8192 -> 64/67,
  hidden_size 8192 -> 128/128, num_groups 512 -> 128/128
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
    A model that performs a matrix multiplication, group normalization, leaky ReLU activation, and element-wise sum.
    """
    def __init__(self, input_size, hidden_size, num_groups, eps=1e-5, negative_slope=0.01):
        super(Model, self).__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=hidden_size, eps=eps)
        self.leaky_relu = nn.LeakyReLU(negative_slope=negative_slope)

    def forward(self, x):
        """
        Performs the forward pass of the model.

        Args:
            x: Input tensor of shape (batch_size, input_size).

        Returns:
            Output tensor of shape (batch_size, hidden_size).
        """
        x = self.fc(x)
        x = self.gn(x)
        x = self.leaky_relu(x)
        x = x + x
        return x


batch_size = 1024
input_size = 8192
hidden_size = 8192
num_groups = 512

def get_inputs():
    return [torch.rand(batch_size, input_size)]

def get_init_inputs():
    return [input_size, hidden_size, num_groups]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten addmm, native_group_norm, run on the
#   meta device at 3 sizes)
# - no domain: num_groups changes no input's shape, but the sizes scale it
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'input_size']},
            {'name': 'fc_weight', 'shape': ['hidden_size', 'input_size'], 'layout_varies': False},
            {'name': 'fc_bias', 'shape': ['hidden_size'], 'layout_varies': False},
            {'name': 'gn_weight', 'shape': ['hidden_size'], 'layout_varies': False},
            {'name': 'gn_bias', 'shape': ['hidden_size'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 1024,
                     'input_size': 8192,
                     'hidden_size': 8192,
                     'num_groups': 512,
                     'reduced': 8192},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64,
                     'input_size': 64,
                     'hidden_size': 128,
                     'num_groups': 128,
                     'reduced': 64},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65,
                     'input_size': 67,
                     'hidden_size': 128,
                     'num_groups': 128,
                     'reduced': 67},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 1024,
                     'input_size': 8192,
                     'hidden_size': 8192,
                     'num_groups': 512,
                     'reduced': 8192},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/62_Matmul_GroupNorm_LeakyReLU_Sum.py',
            'sha256': '9ac23a8651df7ef366e1a9928886bb3fa116fa97d62e5eeba0bc6c138d6bb91e',
            'level': 2,
            'problem': 62,
            'title': 'Matmul_GroupNorm_LeakyReLU_Sum',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 1024 -> 64/65, "
                      'input_size 8192 -> 64/67, hidden_size 8192 -> 128/128, num_groups 512 -> '
                      '128/128',
                      "no domain: num_groups changes no input's shape, but the sizes scale it"]},
 'reduction': 'reduced'}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'input_size': ['input_size', None],
               'hidden_size': ['hidden_size', None],
               'num_groups': ['num_groups', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'fc_weight', 'state': 'fc.weight', 'constant': None},
            {'name': 'fc_bias', 'state': 'fc.bias', 'constant': None},
            {'name': 'gn_weight', 'state': 'gn.weight', 'constant': 1.0},
            {'name': 'gn_bias', 'state': 'gn.bias', 'constant': 0.0}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 1024,
           'input_size': 8192,
           'hidden_size': 8192,
           'num_groups': 512,
           'reduced': 8192},
  'bytes': 335642624,
  'flops': 137438953472},
 {'size': 'small',
  'dims': {'batch_size': 64,
           'input_size': 64,
           'hidden_size': 128,
           'num_groups': 128,
           'reduced': 64},
  'bytes': 83456,
  'flops': 1048576},
 {'size': 'odd',
  'dims': {'batch_size': 65,
           'input_size': 67,
           'hidden_size': 128,
           'num_groups': 128,
           'reduced': 67},
  'bytes': 86540,
  'flops': 1114880}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb2_62_matmul_groupnorm_leakyrelu_sum', SOURCE, SPEC, PLAN, DERIVED)


def kb2_62_matmul_groupnorm_leakyrelu_sum(
    x: torch.Tensor,
    fc_weight: torch.Tensor,
    fc_bias: torch.Tensor,
    gn_weight: torch.Tensor,
    gn_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, fc_weight, fc_bias, gn_weight, gn_bias)


def eager(x, fc_weight, fc_bias, gn_weight, gn_bias):
    return PROBLEM.eager(x, fc_weight, fc_bias, gn_weight, gn_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
