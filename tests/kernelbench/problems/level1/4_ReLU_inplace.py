import torch
import torch.nn as nn


class Model(nn.Module):
    """ReLU applied in place to the input."""

    def __init__(self):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.relu(x)


batch_size = 32
dim = 1024


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
