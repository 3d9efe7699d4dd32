"""A two-layer graph attention network classifies the nodes of a synthetic graph.

Nodes of three communities have weakly informative features and link mostly
inside their community. Exercises nn.Parameter(torch.empty(size=...)) with
xavier_normal_, per-head attention scores broadcast with .mT, LeakyReLU, masking
non-edges with torch.where(adj > 0, e, -9e16 * torch.ones_like(e)), F.dropout
with training=self.training, permute/contiguous/view head concatenation, ELU,
log_softmax + NLLLoss on index masks from torch.randperm, Adam with weight
decay, labels.max().item() + 1, and train/eval mode accuracy.
"""

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn
from flambeau.optim import Adam


class GraphAttentionLayer(nn.Module):
    def __init__(
        self, in_features, out_features, n_heads, concat=False, dropout=0.4, leaky_relu_slope=0.2
    ):
        super().__init__()
        self.n_heads = n_heads
        self.concat = concat
        self.dropout = dropout
        if concat:
            self.out_features = out_features
            assert out_features % n_heads == 0
            self.n_hidden = out_features // n_heads
        else:
            self.n_hidden = out_features
        self.W = nn.Parameter(torch.empty(size=(in_features, self.n_hidden * n_heads)))
        self.a = nn.Parameter(torch.empty(size=(n_heads, 2 * self.n_hidden, 1)))
        self.leakyrelu = nn.LeakyReLU(leaky_relu_slope)
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.xavier_normal_(self.W)
        nn.init.xavier_normal_(self.a)

    def _get_attention_scores(self, h_transformed):
        source_scores = torch.matmul(h_transformed, self.a[:, : self.n_hidden, :])
        target_scores = torch.matmul(h_transformed, self.a[:, self.n_hidden :, :])
        # (n_heads, n_nodes, 1) + (n_heads, 1, n_nodes) = (n_heads, n_nodes, n_nodes)
        e = source_scores + target_scores.mT
        return self.leakyrelu(e)

    def forward(self, h, adj_mat):
        n_nodes = h.shape[0]
        h_transformed = torch.mm(h, self.W)
        h_transformed = F.dropout(h_transformed, self.dropout, training=self.training)
        h_transformed = h_transformed.view(n_nodes, self.n_heads, self.n_hidden).permute(1, 0, 2)
        e = self._get_attention_scores(h_transformed)
        connectivity_mask = -9e16 * torch.ones_like(e)
        e = torch.where(adj_mat > 0, e, connectivity_mask)
        attention = F.softmax(e, dim=-1)
        attention = F.dropout(attention, self.dropout, training=self.training)
        h_prime = torch.matmul(attention, h_transformed)
        if self.concat:
            return h_prime.permute(1, 0, 2).contiguous().view(n_nodes, self.out_features)
        return h_prime.mean(dim=0)


class GAT(nn.Module):
    def __init__(
        self,
        in_features,
        n_hidden,
        n_heads,
        num_classes,
        concat=False,
        dropout=0.4,
        leaky_relu_slope=0.2,
    ):
        super().__init__()
        self.gat1 = GraphAttentionLayer(
            in_features, n_hidden, n_heads, concat, dropout, leaky_relu_slope
        )
        self.gat2 = GraphAttentionLayer(n_hidden, num_classes, 1, False, dropout, leaky_relu_slope)

    def forward(self, input_tensor, adj_mat):
        x = self.gat1(input_tensor, adj_mat)
        x = F.elu(x)
        x = self.gat2(x, adj_mat)
        return F.log_softmax(x, dim=1)


def make_graph(n_nodes, n_classes, n_features, generator):
    labels = torch.randint(0, n_classes, (n_nodes,), generator=generator)
    centres = torch.randn(n_classes, n_features, generator=generator)
    features = centres[labels] + 2.0 * torch.randn(n_nodes, n_features, generator=generator)
    same = labels.unsqueeze(0) == labels.unsqueeze(1)
    p_edge = torch.where(same, 0.12, 0.01)
    adj_mat = (torch.rand(n_nodes, n_nodes, generator=generator) < p_edge).float()
    adj_mat = ((adj_mat + adj_mat.t()) > 0).float()
    adj_mat = adj_mat + torch.eye(n_nodes)  # self-loops
    return features, labels, adj_mat


def test(model, criterion, input, target, mask):
    model.eval()
    with torch.no_grad():
        output = model(*input)
        output, target = output[mask], target[mask]
        loss = criterion(output, target)
        acc = (output.argmax(dim=1) == target).float().sum() / len(target)
    return loss.item(), acc.item()


def main():
    torch.manual_seed(13)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    features, labels, adj_mat = make_graph(150, 3, 16, torch.Generator().manual_seed(5))
    features, labels, adj_mat = features.to(device), labels.to(device), adj_mat.to(device)
    idx = torch.randperm(len(labels)).to(device)
    idx_test, idx_val, idx_train = idx[:50], idx[50:80], idx[80:]

    gat_net = GAT(
        in_features=features.shape[1],
        n_hidden=16,
        n_heads=4,
        num_classes=labels.max().item() + 1,
        concat=True,
        dropout=0.3,
    ).to(device)
    optimizer = Adam(gat_net.parameters(), lr=0.01, weight_decay=5e-4)
    criterion = nn.NLLLoss()

    first_loss, _ = test(gat_net, criterion, (features, adj_mat), labels, idx_test)
    for epoch in range(1, 61):
        gat_net.train()
        optimizer.zero_grad()
        output = gat_net(features, adj_mat)
        loss = criterion(output[idx_train], labels[idx_train])
        loss.backward()
        optimizer.step()
        if epoch % 20 == 0:
            loss_val, acc_val = test(gat_net, criterion, (features, adj_mat), labels, idx_val)
            print(
                f"Epoch: {epoch:04d} loss_train: {loss.item():.4f} loss_val: {loss_val:.4f} "
                f"acc_val: {acc_val:.4f}"
            )
    loss_test, acc_test = test(gat_net, criterion, (features, adj_mat), labels, idx_test)
    print(f"Test set results: loss {loss_test:.4f} accuracy {acc_test:.4f}")
    assert loss_test < first_loss / 2, (first_loss, loss_test)
    assert acc_test > 0.85, acc_test


if __name__ == "__main__":
    main()
