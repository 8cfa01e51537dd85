# phlippe/uvadlc_notebooks (MIT License, Copyright (c) 2020 Phillip Lippe) docs/tutorial_notebooks/tutorial7/
# GNN_overview.ipynb, its pure-PyTorch cells: a GCN layer (a degree-normalized bmm of the adjacency with projected
# features) and a multi-head GAT layer (edges from adjacency.nonzero(as_tuple=False), flat node indices gathered by
# torch.index_select(input=, index=, dim=), per-head attention logits by einsum('bhc,hc->bh'), written into a
# new_zeros(...).fill_(-9e15) matrix through a boolean mask of repeat'ed adjacency, softmax, einsum('bijh,bjhc->bihc')),
# both with weights set through .data and run under no_grad as the notebook does. `import torch` renamed.
# Changed (marked): no plotting, tqdm, torchvision or Lightning imports and no checkpoint download (the later cells
# use PyTorch Geometric); torch.arange's dtype spelled torch.float (sg.float32 is NumPy's dtype, a NumPy arange);
# the adjacency's torch.Tensor of integers made float (symgrad's sg.Tensor keeps the data's integer dtype);
# added: each layer's output differentiated (a weighted sum's gradients with respect to the weights and features),
# the GAT's off the LeakyReLU's kink.
## Standard libraries
import os
import json
import math
import numpy as np
import time

## PyTorch
import symgrad as torch
import symgrad.nn as nn
import symgrad.nn.functional as F
import symgrad.utils.data as data
import symgrad.optim as optim

device = torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")
print(device)


class GCNLayer(nn.Module):

    def __init__(self, c_in, c_out):
        super().__init__()
        self.projection = nn.Linear(c_in, c_out)

    def forward(self, node_feats, adj_matrix):
        """
        Inputs:
            node_feats - Tensor with node features of shape [batch_size, num_nodes, c_in]
            adj_matrix - Batch of adjacency matrices of the graph. If there is an edge from i to j, adj_matrix[b,i,j]=1 else 0.
                         Supports directed edges by non-symmetric matrices. Assumes to already have added the identity connections.
                         Shape: [batch_size, num_nodes, num_nodes]
        """
        # Num neighbours = number of incoming edges
        num_neighbours = adj_matrix.sum(dim=-1, keepdims=True)
        node_feats = self.projection(node_feats)
        node_feats = torch.bmm(adj_matrix, node_feats)
        node_feats = node_feats / num_neighbours
        return node_feats


node_feats = torch.arange(8, dtype=torch.float).view(1, 4, 2)  # changed: dtype=torch.float32
adj_matrix = torch.Tensor([[[1, 1, 0, 0],
                            [1, 1, 1, 1],
                            [0, 1, 1, 1],
                            [0, 1, 1, 1]]]).float()  # changed: .float() (sg.Tensor keeps integer data's dtype)

print("Node features:\n", node_feats)
print("\nAdjacency matrix:\n", adj_matrix)

layer = GCNLayer(c_in=2, c_out=2)
layer.projection.weight.data = torch.Tensor([[1., 0.], [0., 1.]])
layer.projection.bias.data = torch.Tensor([0., 0.])

with torch.no_grad():
    out_feats = layer(node_feats, adj_matrix)

print("Adjacency matrix", adj_matrix)
print("Input features", node_feats)
print("Output features", out_feats)

features = node_feats.clone().requires_grad_()  # changed: added, the layer differentiated
(layer(features, adj_matrix) * torch.arange(8.0, dtype=torch.float).view(1, 4, 2)).sum().backward()  # changed
print("GCN gradients", layer.projection.weight.grad, layer.projection.bias.grad, features.grad)  # changed: added


class GATLayer(nn.Module):

    def __init__(self, c_in, c_out, num_heads=1, concat_heads=True, alpha=0.2):
        """
        Inputs:
            c_in - Dimensionality of input features
            c_out - Dimensionality of output features
            num_heads - Number of heads, i.e. attention mechanisms to apply in parallel. The
                        output features are equally split up over the heads if concat_heads=True.
            concat_heads - If True, the output of the different heads is concatenated instead of averaged.
            alpha - Negative slope of the LeakyReLU activation.
        """
        super().__init__()
        self.num_heads = num_heads
        self.concat_heads = concat_heads
        if self.concat_heads:
            assert c_out % num_heads == 0, "Number of output features must be a multiple of the count of heads."
            c_out = c_out // num_heads

        # Sub-modules and parameters needed in the layer
        self.projection = nn.Linear(c_in, c_out * num_heads)
        self.a = nn.Parameter(torch.Tensor(num_heads, 2 * c_out)) # One per head
        self.leakyrelu = nn.LeakyReLU(alpha)

        # Initialization from the original implementation
        nn.init.xavier_uniform_(self.projection.weight.data, gain=1.414)
        nn.init.xavier_uniform_(self.a.data, gain=1.414)

    def forward(self, node_feats, adj_matrix, print_attn_probs=False):
        """
        Inputs:
            node_feats - Input features of the node. Shape: [batch_size, c_in]
            adj_matrix - Adjacency matrix including self-connections. Shape: [batch_size, num_nodes, num_nodes]
            print_attn_probs - If True, the attention weights are printed during the forward pass (for debugging purposes)
        """
        batch_size, num_nodes = node_feats.size(0), node_feats.size(1)

        # Apply linear layer and sort nodes by head
        node_feats = self.projection(node_feats)
        node_feats = node_feats.view(batch_size, num_nodes, self.num_heads, -1)

        # We need to calculate the attention logits for every edge in the adjacency matrix
        # Doing this on all possible combinations of nodes is very expensive
        # => Create a tensor of [W*h_i||W*h_j] with i and j being the indices of all edges
        edges = adj_matrix.nonzero(as_tuple=False) # Returns indices where the adjacency matrix is not 0 => edges
        node_feats_flat = node_feats.view(batch_size * num_nodes, self.num_heads, -1)
        edge_indices_row = edges[:,0] * num_nodes + edges[:,1]
        edge_indices_col = edges[:,0] * num_nodes + edges[:,2]
        a_input = torch.cat([
            torch.index_select(input=node_feats_flat, index=edge_indices_row, dim=0),
            torch.index_select(input=node_feats_flat, index=edge_indices_col, dim=0)
        ], dim=-1) # Index select returns a tensor with node_feats_flat being indexed at the desired positions along dim=0

        # Calculate attention MLP output (independent for each head)
        attn_logits = torch.einsum('bhc,hc->bh', a_input, self.a)
        attn_logits = self.leakyrelu(attn_logits)

        # Map list of attention values back into a matrix
        attn_matrix = attn_logits.new_zeros(adj_matrix.shape+(self.num_heads,)).fill_(-9e15)
        attn_matrix[adj_matrix[...,None].repeat(1,1,1,self.num_heads) == 1] = attn_logits.reshape(-1)

        # Weighted average of attention
        attn_probs = F.softmax(attn_matrix, dim=2)
        if print_attn_probs:
            print("Attention probs\n", attn_probs.permute(0, 3, 1, 2))
        node_feats = torch.einsum('bijh,bjhc->bihc', attn_probs, node_feats)

        # If heads should be concatenated, we can do this by reshaping. Otherwise, take mean
        if self.concat_heads:
            node_feats = node_feats.reshape(batch_size, num_nodes, -1)
        else:
            node_feats = node_feats.mean(dim=2)

        return node_feats


layer = GATLayer(2, 2, num_heads=2)
layer.projection.weight.data = torch.Tensor([[1., 0.], [0., 1.]])
layer.projection.bias.data = torch.Tensor([0., 0.])
layer.a.data = torch.Tensor([[-0.2, 0.3], [0.1, -0.1]])

with torch.no_grad():
    out_feats = layer(node_feats, adj_matrix, print_attn_probs=True)

print("Adjacency matrix", adj_matrix)
print("Input features", node_feats)
print("Output features", out_feats)

layer.a.data = torch.Tensor([[-0.2, 0.3], [0.1, -0.15]])  # changed: added (0.1, -0.1 gives self-edges logits of
# 0 or a rounding's 3e-17 by BLAS's fused multiply-adds: LeakyReLU's kink, where the gradient's slope jumps)
for concat_heads in (True, False):  # changed: added, the layer differentiated with its heads concatenated or averaged
    layer.concat_heads = concat_heads  # changed: added
    features = node_feats.clone().requires_grad_()  # changed: added
    out = layer(features, adj_matrix)  # changed: added
    (out * torch.linspace(-1.0, 1.0, out.numel(), dtype=torch.float).view(out.shape)).sum().backward()  # changed
    print("GAT gradients", layer.a.grad, layer.projection.weight.grad, features.grad)  # changed: added
    layer.zero_grad()  # changed: added
