"""kb1_39_l2norm: KernelBench level 1, problem 39 (L2Norm_).

Imported by `kernelgen import kernelbench` from KernelBench/level1/39_L2Norm_.py.

At the problem's own size (batch_size=32768, dim=65535):
- x: ['batch_size', 'dim'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 32768 -> 128/129, dim 65535 -> 128/131
Note: domain: batch_size, dim drawn

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
    Simple model that performs L2 normalization.
    """
    def __init__(self):
        """
        Initializes the L2Norm layer.

        Args:
            dim (int): Dimension along which to normalize.
        """
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies L2 normalization to the input tensor.

        Args:
            x (torch.Tensor): Input tensor of shape (*, dim, *).

        Returns:
            torch.Tensor: Output tensor with L2 normalization applied, same shape as input.
        """
        return x / torch.norm(x, p=2, dim=1, keepdim=True)

batch_size = 32768
# choose dim so total <2^31
dim = 65535

def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]

def get_init_inputs():
    return []'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: dim, the terms each output sums (aten linalg_vector_norm, run on the meta device
#   at 8 sizes)
# - value families: normal, uniform, wide, small, large, spike, negative, sorted_up, sorted_down,
#   constant, ties, neg_inf, specials; not denormal (small: 8192 of 16384 entries off, |err| inf
#   > atol 7e-05 + rtol 1.3e-06*|ref|)
# - layouts: contiguous, strided, transposed, offset
# - probed at the CPU sizes and at reach:dim=65535 (the longest reduction)
# - dims: batch_size 1..32768, dim 1..65535 (the least and the blocks each takes, tried on the
#   meta device from the CPU size)
SPEC = {'inputs': [{'name': 'x', 'shape': ['batch_size', 'dim']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem', 'dims': {'batch_size': 32768, 'dim': 65535}, 'interpreter': False},
           {'name': 'small', 'dims': {'batch_size': 128, 'dim': 128}, 'interpreter': True},
           {'name': 'odd', 'dims': {'batch_size': 129, 'dim': 131}, 'interpreter': True}],
 'bench': [{'name': 'problem', 'dims': {'batch_size': 32768, 'dim': 65535}, 'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/39_L2Norm_.py',
            'sha256': 'fb8153fbe2a50679fcbbc3114f46c4157547138679fb6ecbabec0497e90a55c3',
            'level': 1,
            'problem': 39,
            'title': 'L2Norm_',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 32768 -> 128/129, dim "
                      '65535 -> 128/131',
                      'domain: batch_size, dim drawn']},
 'reduction': 'dim',
 'domain': {'dims': {'batch_size': {'range': [1, 32768], 'cpu_max': 129},
                     'dim': {'range': [1, 65535], 'cpu_max': 131}},
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
                      'neg_inf',
                      'specials']}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None], 'dim': ['dim', None]},
 'inputs': [{'name': 'x', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 32768, 'dim': 65535},
  'bytes': 17179607040,
  'flops': 0},
 {'size': 'small', 'dims': {'batch_size': 128, 'dim': 128}, 'bytes': 131072, 'flops': 0},
 {'size': 'odd', 'dims': {'batch_size': 129, 'dim': 131}, 'bytes': 135192, 'flops': 0}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {}

PROBLEM = DrawnProblem('kb1_39_l2norm', SOURCE, SPEC, PLAN, DERIVED)


def kb1_39_l2norm(x: torch.Tensor) -> torch.Tensor:
    return PROBLEM.forward(x)


def eager(x):
    return PROBLEM.eager(x)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
