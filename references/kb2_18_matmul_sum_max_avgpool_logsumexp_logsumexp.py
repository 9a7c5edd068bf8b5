"""kb2_18_matmul_sum_max_avgpool_logsumexp_logsumexp: KernelBench level 2, problem 18 (Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp).

Imported by `kernelgen import kernelbench` from KernelBench/level2/18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp.py.

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
    Model that performs a sequence of operations:
        - Matrix multiplication
        - Summation
        - Max
        - Average pooling
        - LogSumExp
        - LogSumExp
    """
    def __init__(self, in_features, out_features):
        super(Model, self).__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, in_features).
        Returns:
            torch.Tensor: Output tensor of shape (batch_size, 1).
        """
        x = self.linear(x)  # (batch_size, out_features)
        x = torch.sum(x, dim=1, keepdim=True) # (batch_size, 1)
        x = torch.max(x, dim=1, keepdim=True)[0] # (batch_size, 1)
        x = torch.mean(x, dim=1, keepdim=True) # (batch_size, 1)
        x = torch.logsumexp(x, dim=1, keepdim=True) # (batch_size, 1)
        x = torch.logsumexp(x, dim=1, keepdim=True) # (batch_size, 1)
        return x

batch_size = 1024
in_features  = 8192  
out_features = 8192

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features]'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten addmm, sum, mean, logsumexp, run on the
#   meta device at 9 sizes); for a drawn size, the largest of in_features or out_features or 1 or
#   1 or 1
# - value families: normal, uniform, small, sorted_up, sorted_down, constant, ties, denormal,
#   neg_inf, specials; not wide (small: 1 of 64 entries off, |err| 7.5e-05 > atol 7e-05 + rtol
#   1.3e-06*|ref|); large (small: 4 of 64 entries off, |err| 4.39e+05 > atol 7e-05 + rtol
#   1.3e-06*|ref|); spike (small: 4 of 64 entries off, |err| 0.000276 > atol 7e-05 + rtol
#   1.3e-06*|ref|); negative (small: 6 of 64 entries off, |err| 0.002 > atol 7e-05 + rtol
#   1.3e-06*|ref|)
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
            'file': 'KernelBench/level2/18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp.py',
            'sha256': '0a7391a12a0c88164045b68580b57f51efee843465aa0060d86fbb5f00f65861',
            'level': 2,
            'problem': 18,
            'title': 'Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp',
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
                      'small',
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
           {'factor': 1.0, 'powers': {'out_features': 1}},
           {'factor': 1.0},
           {'factor': 1.0},
           {'factor': 1.0}]}

PROBLEM = DrawnProblem('kb2_18_matmul_sum_max_avgpool_logsumexp_logsumexp', SOURCE, SPEC, PLAN, DERIVED)


def kb2_18_matmul_sum_max_avgpool_logsumexp_logsumexp(
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
