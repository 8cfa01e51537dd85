# pytorch/examples gcn/main.py: a two-layer graph convolutional network (GraphConv: mm, then the normalized
# adjacency's product; relu, dropout, log_softmax) on a citation graph's node classification, with the
# renormalization trick (sum, reciprocal, masked assignment of inf, diag) and Adam with weight decay, NLLLoss on
# index masks, evaluated under no_grad. `import torch` renamed. Changed (marked): sparse tensors are dense
# (symgrad has no sparse layout: to_sparse dropped, spmm is mm, the adjacency built densely, duplicates summed as
# coalesce sums them); a synthetic graph of Cora's file format (60 papers, 40 words, 3 classes, 150 citations)
# written to a temporary folder instead of downloaded; float64; weights and the split from NumPy (symgrad's random
# numbers are not PyTorch's); dropout 0 (random); 20 epochs, printed every 5, without timings; args fixed.
import os
import time
import tempfile  # changed: the synthetic dataset's folder
import numpy as np
import argparse

import symgrad as sg
from symgrad import nn
import symgrad.nn.functional as F
from symgrad.optim import Adam


class GraphConv(nn.Module):
    """
        Graph Convolutional Layer described in "Semi-Supervised Classification with Graph Convolutional Networks".

        Given an input feature representation for each node in a graph, the Graph Convolutional Layer aims to aggregate
        information from the node's neighborhood to update its own representation. This is achieved by applying a graph
        convolutional operation that combines the features of a node with the features of its neighboring nodes.

        Mathematically, the Graph Convolutional Layer can be described as follows:

            H' = f(D^(-1/2) * A * D^(-1/2) * H * W)

        where:
            H: Input feature matrix with shape (N, F_in), where N is the number of nodes and F_in is the number of 
                input features per node.
            A: Adjacency matrix of the graph with shape (N, N), representing the relationships between nodes.
            W: Learnable weight matrix with shape (F_in, F_out), where F_out is the number of output features per node.
            D: The degree matrix.
    """
    def __init__(self, input_dim, output_dim, use_bias=False):
        super(GraphConv, self).__init__()

        # Initialize the weight matrix W (in this case called `kernel`)
        self.kernel = nn.Parameter(sg.Tensor(input_dim, output_dim))
        nn.init.xavier_normal_(self.kernel) # Initialize the weights using Xavier initialization
        self.kernel.data = sg.tensor(  # changed: NumPy's numbers
            RNG.normal(0, (2 / (input_dim + output_dim)) ** 0.5, (input_dim, output_dim)))

        # Initialize the bias (if use_bias is True)
        self.bias = None
        if use_bias:
            self.bias = nn.Parameter(sg.Tensor(output_dim))
            nn.init.zeros_(self.bias) # Initialize the bias to zeros

    def forward(self, input_tensor, adj_mat):
        """
        Performs a graph convolution operation.

        Args:
            input_tensor (torch.Tensor): Input tensor representing node features.
            adj_mat (torch.Tensor): Normalized adjacency matrix representing graph structure.

        Returns:
            torch.Tensor: Output tensor after the graph convolution operation.
        """

        support = sg.mm(input_tensor, self.kernel) # Matrix multiplication between input and weight matrix
        output = sg.mm(adj_mat, support) # changed: torch.spmm, adj_mat is dense
        # Add the bias (if bias is not None)
        if self.bias is not None:
            output = output + self.bias

        return output


class GCN(nn.Module):
    """
    Graph Convolutional Network (GCN) as described in the paper `"Semi-Supervised Classification with Graph 
    Convolutional Networks" <https://arxiv.org/pdf/1609.02907.pdf>`.

    The Graph Convolutional Network is a deep learning architecture designed for semi-supervised node 
    classification tasks on graph-structured data. It leverages the graph structure to learn node representations 
    by propagating information through the graph using graph convolutional layers.

    The original implementation consists of two stacked graph convolutional layers. The ReLU activation function is 
    applied to the hidden representations, and the Softmax activation function is applied to the output representations.
    """
    def __init__(self, input_dim, hidden_dim, output_dim, use_bias=True, dropout_p=0.1):
        super(GCN, self).__init__()

        # Define the Graph Convolution layers
        self.gc1 = GraphConv(input_dim, hidden_dim, use_bias=use_bias)
        self.gc2 = GraphConv(hidden_dim, output_dim, use_bias=use_bias)

        # Define the dropout layer
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input_tensor, adj_mat):
        """
        Performs forward pass of the Graph Convolutional Network (GCN).

        Args:
            input_tensor (torch.Tensor): Input node feature matrix with shape (N, input_dim), where N is the number of
                nodes
                and input_dim is the number of input features per node.
            adj_mat (torch.Tensor): Normalized adjacency matrix of the graph with shape (N, N), representing the
                relationships between
                nodes.

        Returns:
            torch.Tensor: Output tensor with shape (N, output_dim), representing the predicted class probabilities
                for each node.
        """

        # Perform the first graph convolutional layer
        x = self.gc1(input_tensor, adj_mat)
        x = F.relu(x) # Apply ReLU activation function
        x = self.dropout(x) # Apply dropout regularization

        # Perform the second graph convolutional layer
        x = self.gc2(x, adj_mat)

        # Apply log-softmax activation function for classification
        return F.log_softmax(x, dim=1)


RNG = np.random.default_rng(0)  # changed: the random numbers' source


def write_synthetic_cora(path, papers=60, words=40, classes=3, citations=150):  # changed: Cora's format
    ids = RNG.choice(10000, papers, replace=False)
    topic = RNG.integers(classes, size=papers)
    words_of = (RNG.random((papers, words)) < 0.1 + 0.3 * (np.arange(words) % classes == topic[:, None])).astype(int)
    words_of[0] = 0  # a paper without words: its scale is 1/0, set to 0 by the program
    with open(os.path.join(path, 'cora.content'), 'w') as f:
        for i in range(papers):
            f.write('\t'.join([str(ids[i]), *map(str, words_of[i]), f'Topic_{topic[i]}']) + '\n')
    with open(os.path.join(path, 'cora.cites'), 'w') as f:
        for _ in range(citations):
            a = RNG.integers(papers)
            b = RNG.choice(np.flatnonzero(topic == topic[a])) if RNG.random() < 0.8 else RNG.integers(papers)
            f.write(f'{ids[a]}\t{ids[b]}\n')
    return path


def load_cora(path='./cora', device='cpu'):
    """
    The graph convolutional operation rquires the normalized adjacency matrix: D^(-1/2) * A * D^(-1/2). This step 
    scales the adjacency matrix such that the features of neighboring nodes are weighted appropriately during 
    aggregation. The steps involved in the renormalization trick are as follows:
        - Compute the degree matrix.
        - Compute the inverse square root of the degree matrix.
        - Multiply the inverse square root of the degree matrix with the adjacency matrix.
    """

    # Set the paths to the data files
    content_path = os.path.join(path, 'cora.content')
    cites_path = os.path.join(path, 'cora.cites')

    # Load data from files
    content_tensor = np.genfromtxt(content_path, dtype=np.dtype(str))
    cites_tensor = np.genfromtxt(cites_path, dtype=np.int32)

    # Process features
    features = sg.DoubleTensor(content_tensor[:, 1:-1].astype(np.int32)) # changed: float64
    scale_vector = sg.sum(features, dim=1) # Compute sum of features for each node
    scale_vector = 1 / scale_vector # Compute reciprocal of the sums
    scale_vector[scale_vector == float('inf')] = 0 # Handle division by zero cases
    scale_vector = sg.diag(scale_vector) # changed: dense, not .to_sparse()
    features = scale_vector @ features # Scale the features using the scale vector

    # Process labels
    classes, labels = np.unique(content_tensor[:, -1], return_inverse=True)
    # Extract unique classes and map labels to indices
    labels = sg.LongTensor(labels) # Convert labels to a tensor

    # Process adjacency matrix
    idx = content_tensor[:, 0].astype(np.int32) # Extract node indices
    idx_map = {id: pos for pos, id in enumerate(idx)} # Create a dictionary to map indices to positions

    # Map node indices to positions in the adjacency matrix
    edges = np.array(
        list(map(lambda edge: [idx_map[edge[0]], idx_map[edge[1]]], 
            cites_tensor)), dtype=np.int32)

    V = len(idx) # Number of nodes
    E = edges.shape[0] # Number of edges
    adj_mat = np.zeros((V, V), dtype=np.int64)  # changed: torch.sparse_coo_tensor(edges.T, torch.ones(E), (V, V), ...)
    np.add.at(adj_mat, tuple(edges.T), 1)  # changed: dense, duplicate edges summed as coalesce sums them
    adj_mat = sg.tensor(adj_mat)  # changed
    adj_mat = sg.eye(V, dtype=sg.double) + adj_mat  # changed: float64; # Add self-loops to the adjacency matrix

    degree_mat = sg.sum(adj_mat, dim=1) # Compute the sum of each row in the adjacency matrix (degree matrix)
    degree_mat = sg.sqrt(1 / degree_mat) # Compute the reciprocal square root of the degrees
    degree_mat[degree_mat == float('inf')] = 0 # Handle division by zero cases
    degree_mat = sg.diag(degree_mat) # changed: dense, not .to_sparse()

    adj_mat = degree_mat @ adj_mat @ degree_mat # Apply the renormalization trick

    return features.to(device), labels.to(device), adj_mat.to(device)  # changed: dense, not .to_sparse()

def train_iter(epoch, model, optimizer, criterion, input, target, mask_train, mask_val, print_every=10):
    start_t = time.time()
    model.train()
    optimizer.zero_grad()

    # Forward pass
    output = model(*input) 
    loss = criterion(output[mask_train], target[mask_train]) # Compute the loss using the training mask

    loss.backward()
    optimizer.step()

    # Evaluate the model performance on training and validation sets
    loss_train, acc_train = test(model, criterion, input, target, mask_train)
    loss_val, acc_val = test(model, criterion, input, target, mask_val)

    if epoch % print_every == 0:
        # Print the training progress at specified intervals
        print(f'Epoch: {epoch:04d} loss_train: {loss_train:.4f} acc_train: {acc_train:.4f} '  # changed: no timing
              f'loss_val: {loss_val:.4f} acc_val: {acc_val:.4f}')
        print('loss', loss_train, loss_val)  # changed: all digits


def test(model, criterion, input, target, mask):
    model.eval()
    with sg.no_grad():
        output = model(*input)
        output, target = output[mask], target[mask]

        loss = criterion(output, target)
        acc = (output.argmax(dim=1) == target).float().sum() / len(target)
    return loss.item(), acc.item()


if __name__ == '__main__':
    args = argparse.Namespace(epochs=20, lr=0.01, l2=5e-4, dropout_p=0.0, hidden_dim=16, val_every=5,  # changed
                              include_bias=True, no_accel=True, dry_run=False, seed=42)  # changed: fixed

    use_accel = not args.no_accel and sg.accelerator.is_available()

    sg.manual_seed(args.seed)

    if use_accel:
        device = sg.accelerator.current_accelerator()
    else:
        device = sg.device('cpu')

    print(f'Using {device} device')

    print('Writing a synthetic dataset...')  # changed: Cora downloaded
    path = write_synthetic_cora(tempfile.mkdtemp())  # changed

    print('Loading dataset...')
    features, labels, adj_mat = load_cora(path, device=device)  # changed: the synthetic files
    idx = sg.tensor(RNG.permutation(len(labels))).to(device)  # changed: NumPy's numbers
    idx_test, idx_val, idx_train = idx[:20], idx[20:30], idx[30:]  # changed: of 60 nodes

    gcn = GCN(features.shape[1], args.hidden_dim, labels.max().item() + 1, args.include_bias, args.dropout_p).to(device)
    optimizer = Adam(gcn.parameters(), lr=args.lr, weight_decay=args.l2)
    criterion = nn.NLLLoss()
    gcn = gcn.double()  # changed: float64

    for epoch in range(args.epochs):
        train_iter(epoch + 1, gcn, optimizer, criterion, (features, adj_mat), labels, idx_train, idx_val,
                   args.val_every)
        if args.dry_run:
            break

    loss_test, acc_test = test(gcn, criterion, (features, adj_mat), labels, idx_test)
    print(f'Test set results: loss {loss_test:.4f} accuracy {acc_test:.4f}')