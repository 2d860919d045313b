"""rocm-doctor: diagnoses and repairs PyTorch GPU setups, AMD ROCm first."""

__version__ = "0.1.0"
