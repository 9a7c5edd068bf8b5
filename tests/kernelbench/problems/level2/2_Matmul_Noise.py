import torch
import torch.nn as nn


class Model(nn.Module):
    """A linear layer whose output gets Gaussian noise drawn in the forward."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = self.linear(x)
        return y + 0.1 * torch.randn_like(y)


batch_size = 16
in_features = 64
out_features = 32


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
