"""kernelgen: propose, verify, profile and keep the best Triton kernel for each operator."""

__version__ = "0.1.0"
