"""kb1_97_scaleddotproductattention: KernelBench level 1, problem 97 (ScaledDotProductAttention).

Imported by `kernelgen import kernelbench` from KernelBench/level1/97_ScaledDotProductAttention.py.

At the problem's own size (batch_size=32, num_heads=32, sequence_length=512,
  embedding_dimension=1024, reduced=1024):
- Q: ['batch_size', 'num_heads', 'sequence_length', 'embedding_dimension'] float32
- K: ['batch_size', 'num_heads', 'sequence_length', 'embedding_dimension'] float32
- V: ['batch_size', 'num_heads', 'sequence_length', 'embedding_dimension'] float32
CPU sizes: small, odd.
Note: CPU sizes scale the module's constants: batch_size 32 -> 8/9, num_heads 32 -> 8/11,
  sequence_length 512 -> 8/8, embedding_dimension 1024 -> 16/17
Note: domain: batch_size, num_heads, sequence_length, embedding_dimension drawn

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
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
        out = torch.nn.functional.scaled_dot_product_attention(Q, K, V)
        return out

batch_size = 32
num_heads = 32
sequence_length = 512
embedding_dimension = 1024

def get_inputs():
    Q = torch.rand(batch_size, num_heads, sequence_length, embedding_dimension)
    K = torch.rand(batch_size, num_heads, sequence_length, embedding_dimension)
    V = torch.rand(batch_size, num_heads, sequence_length, embedding_dimension)
    return [Q, K, V]

def get_init_inputs():
    return []
'''

# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):
# - reduction: reduced, the terms each output sums (aten bmm, run on the meta device at 10
#   sizes); for a drawn size, the largest of embedding_dimension or sequence_length
# - value families: normal, uniform, small, large, sorted_up, sorted_down, constant, ties,
#   denormal; not wide (small: 18 of 8192 entries off, |err| 0.00446 > atol 4e-05 + rtol
#   1.3e-06*|ref|); spike (small: 2 of 8192 entries off, |err| 0.000205 > atol 4e-05 + rtol
#   1.3e-06*|ref|); negative (small: 17 of 8192 entries off, |err| 0.000357 > atol 4e-05 + rtol
#   1.3e-06*|ref|); neg_inf (small: torch's float32 answer: 0 at [0, 0, 1, 0] where the reference
#   is nan; 717 such entries); specials (small: torch's float32 answer: 0 at [0, 7, 2, 0] where
#   the reference is nan; 48 such entries)
# - layouts: contiguous, strided, transposed, offset, leading
# - probed at the CPU sizes and at reach:embedding_dimension=1024,sequence_length=512 (the
#   longest reduction)
# - a leading view slices sequence_length (second to last in a rank-3+ input)
# - dims: batch_size 1..32, num_heads 1..32, sequence_length 1..512, embedding_dimension 1..1024
#   (the least and the blocks each takes, tried on the meta device from the CPU size)
SPEC = {'inputs': [{'name': 'Q',
             'shape': ['batch_size', 'num_heads', 'sequence_length', 'embedding_dimension']},
            {'name': 'K',
             'shape': ['batch_size', 'num_heads', 'sequence_length', 'embedding_dimension']},
            {'name': 'V',
             'shape': ['batch_size', 'num_heads', 'sequence_length', 'embedding_dimension']}],
 'dtypes': ['float32'],
 'dists': ['normal', 'uniform'],
 'sizes': [{'name': 'problem',
            'dims': {'batch_size': 32,
                     'num_heads': 32,
                     'sequence_length': 512,
                     'embedding_dimension': 1024,
                     'reduced': 1024},
            'interpreter': False},
           {'name': 'small',
            'dims': {'batch_size': 8,
                     'num_heads': 8,
                     'sequence_length': 8,
                     'embedding_dimension': 16,
                     'reduced': 16},
            'interpreter': True},
           {'name': 'odd',
            'dims': {'batch_size': 9,
                     'num_heads': 11,
                     'sequence_length': 8,
                     'embedding_dimension': 17,
                     'reduced': 17},
            'interpreter': True}],
 'bench': [{'name': 'problem',
            'dims': {'batch_size': 32,
                     'num_heads': 32,
                     'sequence_length': 512,
                     'embedding_dimension': 1024,
                     'reduced': 1024},
            'dtype': 'float32'}],
 'origin': {'source': 'kernelbench',
            'file': 'KernelBench/level1/97_ScaledDotProductAttention.py',
            'sha256': 'a07ca5135657c2ea29f7b7a66ec1815560858ad69fa88221bfc0f82bd5648091',
            'level': 1,
            'problem': 97,
            'title': 'ScaledDotProductAttention',
            'convolution': False,
            'cpu': True,
            'notes': ["CPU sizes scale the module's constants: batch_size 32 -> 8/9, num_heads 32 "
                      '-> 8/11, sequence_length 512 -> 8/8, embedding_dimension 1024 -> 16/17',
                      'domain: batch_size, num_heads, sequence_length, embedding_dimension '
                      'drawn']},
 'reduction': 'reduced',
 'domain': {'dims': {'batch_size': {'range': [1, 32], 'cpu_max': 9},
                     'num_heads': {'range': [1, 32], 'cpu_max': 11},
                     'sequence_length': {'range': [1, 512], 'cpu_max': 8},
                     'embedding_dimension': {'range': [1, 1024], 'cpu_max': 17}},
            'dtypes': ['float32'],
            'layouts': ['contiguous', 'strided', 'transposed', 'offset', 'leading'],
            'dists': ['normal',
                      'uniform',
                      'small',
                      'large',
                      'sorted_up',
                      'sorted_down',
                      'constant',
                      'ties',
                      'denormal'],
            'derived': ['reduced'],
            'heads': 'sequence_length'}}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {'constants': {'batch_size': ['batch_size', None],
               'num_heads': ['num_heads', None],
               'sequence_length': ['sequence_length', None],
               'embedding_dimension': ['embedding_dimension', None]},
 'inputs': [{'name': 'Q', 'draw': 'judge'},
            {'name': 'K', 'draw': 'judge'},
            {'name': 'V', 'draw': 'judge'}],
 'params': [],
 'internal': []}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = [{'size': 'problem',
  'dims': {'batch_size': 32,
           'num_heads': 32,
           'sequence_length': 512,
           'embedding_dimension': 1024,
           'reduced': 1024},
  'bytes': 8589934592,
  'flops': 1099511627776},
 {'size': 'small',
  'dims': {'batch_size': 8,
           'num_heads': 8,
           'sequence_length': 8,
           'embedding_dimension': 16,
           'reduced': 16},
  'bytes': 131072,
  'flops': 262144},
 {'size': 'odd',
  'dims': {'batch_size': 9,
           'num_heads': 11,
           'sequence_length': 8,
           'embedding_dimension': 17,
           'reduced': 17},
  'bytes': 215424,
  'flops': 430848}]

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {'reduced': 'reduced',
 'sites': [{'factor': 1.0, 'powers': {'embedding_dimension': 1}},
           {'factor': 1.0, 'powers': {'sequence_length': 1}}]}

PROBLEM = DrawnProblem('kb1_97_scaleddotproductattention', SOURCE, SPEC, PLAN, DERIVED)


def kb1_97_scaleddotproductattention(
    Q: torch.Tensor,
    K: torch.Tensor,
    V: torch.Tensor,
) -> torch.Tensor:
    return PROBLEM.forward(Q, K, V)


def eager(Q, K, V):
    return PROBLEM.eager(Q, K, V)


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
