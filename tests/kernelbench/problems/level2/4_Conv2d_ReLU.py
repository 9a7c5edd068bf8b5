import torch
import torch.nn as nn


class Model(nn.Module):
    """A 3x3 convolution followed by ReLU."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        return torch.relu(self.conv(x))


batch_size = 16
out_channels = 8
kernel_size = 3


def get_inputs():
    return [torch.rand(batch_size, 3, 64, 64)]


def get_init_inputs():
    return [3, out_channels, kernel_size]
