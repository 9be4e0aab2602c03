import torch


def get_inputs():
    return [torch.randn(4)]


def get_init_inputs():
    return []
