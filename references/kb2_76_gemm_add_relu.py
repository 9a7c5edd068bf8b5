"""kb2_76_gemm_add_relu: KernelBench level 2, problem 76 (Gemm_Add_ReLU).

Imported by `kernelgen import kernelbench` from KernelBench/level2/76_Gemm_Add_ReLU.py.

At the problem's own size (batch_size=1024, in_features=8192, out_features=8192):
- x: ['batch_size', 'in_features'] float32
- bias: ['out_features'] float32
- gemm_weight: ['out_features', 'in_features'] float32
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
    Simple model that performs a matrix multiplication, adds a bias term, and applies ReLU.
    """
    def __init__(self, in_features, out_features, bias_shape):
        super(Model, self).__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Input tensor with shape (batch_size, in_features).
        Returns:
            torch.Tensor: Output tensor with shape (batch_size, out_features).
        """
        x = self.gemm(x)
        x = x + self.bias
        x = torch.relu(x)
        return x

batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, bias_shape]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: in_features, the terms each output sums (aten mm, run on the meta device at 9
#   sizes)
# - value families: normal, uniform, wide, small, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf, specials; not large (small: 133 of 8192 entries off, |err|
#   6.22e+04 > atol 6e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset
# - probed at the CPU sizes and at reach:in_features=8192 (the longest reduction)
# - dims: batch_size 1..1024, in_features 1..8192, out_features 1..8192 (the least and the blocks
#   each takes, tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_features']},
            {'name': 'bias', 'shape': ['out_features'], 'layout_varies': False},
            {'name': 'gemm_weight',
             'shape': ['out_features', 'in_features'],
             'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 1024, 'in_features': 8192, 'out_features': 8192},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64, 'in_features': 64, 'out_features': 128},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65, 'in_features': 67, 'out_features': 129},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 1024, 'in_features': 8192, 'out_features': 8192},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/76_Gemm_Add_ReLU.py',
            'sha256': '88e932ace4f16e0477574c5c99b8d5665393e02f82f664dc99f2e22a2674ea42',
            'level': 2,
            'problem': 76,
            'title': 'Gemm_Add_ReLU',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 1024 -> 64/65, "
                      'in_features 8192 -> 64/67, out_features 8192 -> 128/129',
                      'domain: batch_size, in_features, out_features drawn']},
 'reduction': 'in_features',
 'domain': {'dims': {'batch_size': {'range': [1, 1024], 'cpu_max': 65},
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
                      'specials']}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'in_features': ['in_features', None],
               'out_features': ['out_features', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'bias', 'state': 'bias', 'constant': None},
            {'name': 'gemm_weight', 'state': 'gemm.weight', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 1024, 'in_features': 8192, 'out_features': 8192},
  'bytes': 335577088,
  'flops': 137438953472},
 {'size': 'small',
  'dims': {'batch_size': 64, 'in_features': 64, 'out_features': 128},
  'bytes': 82432,
  'flops': 1048576},
 {'size': 'odd',
  'dims': {'batch_size': 65, 'in_features': 67, 'out_features': 129},
  'bytes': 86048,
  'flops': 1123590}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb2_76_gemm_add_relu', SOURCE, SPEC, PLAN, DERIVED)


def kb2_76_gemm_add_relu(
    x: torch.Tensor,
    bias: torch.Tensor,
    gemm_weight: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, bias, gemm_weight)


def eager(x, bias, gemm_weight):
    return PROBLEM.eager(x, bias, gemm_weight)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
