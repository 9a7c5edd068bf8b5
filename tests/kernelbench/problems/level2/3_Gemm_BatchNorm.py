import torch
import torch.nn as nn


class Model(nn.Module):
    """A linear layer followed by batch normalization (training mode: batch statistics)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features)

    def forward(self, x):
        return self.bn(self.linear(x))


batch_size = 64
in_features = 256
out_features = 512


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
