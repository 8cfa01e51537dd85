"""`sg.utils.data`: datasets, samplers and DataLoader with torch.utils.data's names and batches.

For the same indices a DataLoader gives the same batches as PyTorch's; shuffled orders come from symgrad's
generators (sg.Generator, sg.manual_seed), so they are not PyTorch's orders.
"""
from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler

__all__ = ["BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset", "RandomSampler", "Sampler",
           "SequentialSampler", "Subset", "SubsetRandomSampler", "TensorDataset", "default_collate", "default_convert",
           "random_split"]
