"""kb2_64_gemm_logsumexp_leakyrelu_leakyrelu_gelu_gelu: KernelBench level 2, problem 64 (Gemm_LogSumExp_LeakyReLU_LeakyReLU_GELU_GELU).

Imported by `kernelgen import kernelbench` from KernelBench/level2/64_Gemm_LogSumExp_LeakyReLU_LeakyReLU_GELU_GELU.py.

At the problem's own size (batch_size=1024, in_features=8192, out_features=8192, reduced=8192):
- x: ['batch_size', 'in_features'] float32
- linear_weight: ['out_features', 'in_features'] float32
- linear_bias: ['out_features'] float32
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
    Model that performs a matrix multiplication (Gemm), followed by LogSumExp, LeakyReLU, 
    LeakyReLU, GELU, and GELU activations.
    """
    def __init__(self, in_features, out_features, bias=True):
        super(Model, self).__init__()
        self.linear = nn.Linear(in_features, out_features, bias=bias)

    def forward(self, x):
        # Gemm
        x = self.linear(x)
        # LogSumExp
        x = torch.logsumexp(x, dim=1, keepdim=True)
        # LeakyReLU
        x = torch.nn.functional.leaky_relu(x, negative_slope=0.01)
        # LeakyReLU
        x = torch.nn.functional.leaky_relu(x, negative_slope=0.01)
        # GELU
        x = torch.nn.functional.gelu(x)
        # GELU
        x = torch.nn.functional.gelu(x)
        return x

batch_size = 1024
in_features = 8192
out_features = 8192

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten addmm, logsumexp, run on the meta device
#   at 9 sizes); for a drawn size, the largest of in_features or out_features
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, denormal, neg_inf; not specials (small: torch's float32 answer: NaN at [35,
#   0] where the reference is inf; 2 such entries (output never written there?))
# - layouts: contiguous, strided, transposed, offset
# - dims: batch_size 1..1024, in_features 1..8192, out_features 1..8192 (the least and the blocks
#   each takes, tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'in_features']},
            {'name': 'linear_weight',
             'shape': ['out_features', 'in_features'],
             'layout_varies': False},
            {'name': 'linear_bias', 'shape': ['out_features'], 'layout_varies': False}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 1024,
                     'in_features': 8192,
                     'out_features': 8192,
                     'reduced': 8192},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 64, 'in_features': 128, 'out_features': 128, 'reduced': 128},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 65, 'in_features': 129, 'out_features': 131, 'reduced': 131},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 1024,
                     'in_features': 8192,
                     'out_features': 8192,
                     'reduced': 8192},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level2/64_Gemm_LogSumExp_LeakyReLU_LeakyReLU_GELU_GELU.py',
            'sha256': '3cb78d4eb7f710768b801f0081fef85a5fb5f119a3e49a00ad97bf4baea33a83',
            'level': 2,
            'problem': 64,
            'title': 'Gemm_LogSumExp_LeakyReLU_LeakyReLU_GELU_GELU',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 1024 -> 64/65, "
                      'in_features 8192 -> 128/129, out_features 8192 -> 128/131',
                      'domain: batch_size, in_features, out_features drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 1024], 'cpu_max': 65},
                     'in_features': {'range': [1, 8192], 'cpu_max': 129},
                     'out_features': {'range': [1, 8192], 'cpu_max': 131}},
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
                      'neg_inf'],
            'derived': ['reduced']}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'in_features': ['in_features', None],
               'out_features': ['out_features', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [{'name': 'linear_weight', 'state': 'linear.weight', 'constant': None},
            {'name': 'linear_bias', 'state': 'linear.bias', 'constant': None}],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 1024, 'in_features': 8192, 'out_features': 8192, 'reduced': 8192},
  'bytes': 302026752,
  'flops': 137438953472},
 {'size': 'small',
  'dims': {'batch_size': 64, 'in_features': 128, 'out_features': 128, 'reduced': 128},
  'bytes': 99072,
  'flops': 2097152},
 {'size': 'odd',
  'dims': {'batch_size': 65, 'in_features': 129, 'out_features': 131, 'reduced': 131},
  'bytes': 101920,
  'flops': 2196870}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'reduced': 'reduced',
 'sites': [{'factor': 1.0, 'powers': {'in_features': 1}},
           {'factor': 1.0, 'powers': {'out_features': 1}}]}

PROBLEM = DrawnProblem('kb2_64_gemm_logsumexp_leakyrelu_leakyrelu_gelu_gelu', SOURCE, SPEC, PLAN, DERIVED)


def kb2_64_gemm_logsumexp_leakyrelu_leakyrelu_gelu_gelu(
    x: torch.Tensor,
    linear_weight: torch.Tensor,
    linear_bias: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(x, linear_weight, linear_bias)


def eager(x, linear_weight, linear_bias):
    return PROBLEM.eager(x, linear_weight, linear_bias)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
