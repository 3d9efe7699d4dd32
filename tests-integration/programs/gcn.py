"""A two-layer graph convolutional network with a sparse normalized adjacency matrix.

The graph is synthetic (three communities, NumPy edge list), built and normalized
the way GCN examples prepare Cora: torch.FloatTensor/LongTensor from NumPy,
torch.sparse_coo_tensor from an edge list, torch.eye(V) + sparse adjacency,
D^-1/2 A D^-1/2 with torch.diag(...).to_sparse() and the inf -> 0 fix by boolean
index assignment, and torch.spmm inside the layer. The layer's weight is an
uninitialized nn.Parameter(torch.Tensor(in, out)) filled by xavier_normal_.
"""

import numpy as np

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn
from flambeau.optim import Adam


class GraphConv(nn.Module):
    def __init__(self, input_dim, output_dim, use_bias=False):
        super().__init__()
        self.kernel = nn.Parameter(torch.Tensor(input_dim, output_dim))
        nn.init.xavier_normal_(self.kernel)
        self.bias = None
        if use_bias:
            self.bias = nn.Parameter(torch.Tensor(output_dim))
            nn.init.zeros_(self.bias)

    def forward(self, input_tensor, adj_mat):
        support = torch.mm(input_tensor, self.kernel)
        output = torch.spmm(adj_mat, support)
        if self.bias is not None:
            output = output + self.bias
        return output


class GCN(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim, use_bias=True, dropout_p=0.1):
        super().__init__()
        self.gc1 = GraphConv(input_dim, hidden_dim, use_bias=use_bias)
        self.gc2 = GraphConv(hidden_dim, output_dim, use_bias=use_bias)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input_tensor, adj_mat):
        x = F.relu(self.gc1(input_tensor, adj_mat))
        x = self.dropout(x)
        x = self.gc2(x, adj_mat)
        return F.log_softmax(x, dim=1)


def load_graph(device, n_nodes=150, n_classes=3, n_features=16):
    rng = np.random.default_rng(5)
    labels_np = rng.integers(0, n_classes, n_nodes)
    centres = rng.normal(size=(n_classes, n_features))
    raw = centres[labels_np] + 2.0 * rng.normal(size=(n_nodes, n_features))
    raw = np.abs(raw)
    raw[:3] = 0.0  # three featureless nodes: their row sums are 0

    features = torch.FloatTensor(raw)
    scale_vector = torch.sum(features, dim=1)
    scale_vector = 1 / scale_vector
    scale_vector[scale_vector == float("inf")] = 0
    scale_vector = torch.diag(scale_vector).to_sparse()
    features = scale_vector @ features
    labels = torch.LongTensor(labels_np)

    same = labels_np[:, None] == labels_np[None, :]
    links = rng.random((n_nodes, n_nodes)) < np.where(same, 0.12, 0.01)
    links = np.triu(links, 1)
    edges = np.argwhere(links | links.T).astype(np.int64)

    V, E = n_nodes, edges.shape[0]
    adj_mat = torch.sparse_coo_tensor(edges.T, torch.ones(E), (V, V), dtype=torch.int64)
    adj_mat = torch.eye(V) + adj_mat
    degree_mat = torch.sum(adj_mat, dim=1)
    degree_mat = torch.sqrt(1 / degree_mat)
    degree_mat[degree_mat == float("inf")] = 0
    degree_mat = torch.diag(degree_mat).to_sparse()
    adj_mat = degree_mat @ adj_mat @ degree_mat
    return features.to_sparse().to(device), labels.to(device), adj_mat.to_sparse().to(device)


def test(model, criterion, input, target, mask):
    model.eval()
    with torch.no_grad():
        output = model(*input)
        output, target = output[mask], target[mask]
        loss = criterion(output, target)
        acc = (output.argmax(dim=1) == target).float().sum() / len(target)
    return loss.item(), acc.item()


def main():
    torch.manual_seed(42)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    features, labels, adj_mat = load_graph(device)
    idx = torch.randperm(len(labels)).to(device)
    idx_test, idx_val, idx_train = idx[:50], idx[50:80], idx[80:]

    gcn = GCN(features.shape[1], 16, labels.max().item() + 1, True, 0.5).to(device)
    optimizer = Adam(gcn.parameters(), lr=0.05, weight_decay=5e-4)
    criterion = nn.NLLLoss()

    first_loss, _ = test(gcn, criterion, (features, adj_mat), labels, idx_test)
    for epoch in range(1, 101):
        gcn.train()
        optimizer.zero_grad()
        output = gcn(features, adj_mat)
        loss = criterion(output[idx_train], labels[idx_train])
        loss.backward()
        optimizer.step()
        if epoch % 25 == 0:
            loss_val, acc_val = test(gcn, criterion, (features, adj_mat), labels, idx_val)
            print(f"Epoch: {epoch:04d} loss_train: {loss.item():.4f} acc_val: {acc_val:.4f}")
    loss_test, acc_test = test(gcn, criterion, (features, adj_mat), labels, idx_test)
    print(f"Test set results: loss {loss_test:.4f} accuracy {acc_test:.4f}")
    assert loss_test < first_loss / 2, (first_loss, loss_test)
    assert acc_test > 0.85, acc_test


if __name__ == "__main__":
    main()
