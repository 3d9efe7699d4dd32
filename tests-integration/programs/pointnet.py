"""PointNet classification of synthetic point clouds (spheres, cubes, cylinders).

In the style of PointNet implementations: shared per-point MLPs as Conv1d with
kernel size 1 and BatchNorm1d, an input T-Net predicting a 3x3 transform (initialized
near the identity by adding torch.eye, applied with torch.bmm), a feature T-Net
with the orthogonality regularizer ||I - A A^T||, a symmetric max-pool over
points (torch.max(x, 2, keepdim=True)[0]), random rotation augmentation, and a
check that the classifier is invariant to permuting the points.
"""

import math

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn

N_POINTS = 128
CLASSES = 3


class STNkd(nn.Module):
    def __init__(self, k=64):
        super().__init__()
        self.conv1 = nn.Conv1d(k, 32, 1)
        self.conv2 = nn.Conv1d(32, 64, 1)
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, k * k)
        self.bn1 = nn.BatchNorm1d(32)
        self.bn2 = nn.BatchNorm1d(64)
        self.bn3 = nn.BatchNorm1d(32)
        self.k = k

    def forward(self, x):
        batchsize = x.size()[0]
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        x = torch.max(x, 2, keepdim=True)[0]
        x = x.view(-1, 64)
        x = F.relu(self.bn3(self.fc1(x)))
        x = self.fc2(x)
        iden = (
            torch.eye(self.k, dtype=x.dtype).flatten().view(1, self.k * self.k).repeat(batchsize, 1)
        )
        x = x + iden
        return x.view(-1, self.k, self.k)


class PointNetCls(nn.Module):
    def __init__(self, k=CLASSES):
        super().__init__()
        self.stn = STNkd(k=3)
        self.conv1 = nn.Conv1d(3, 32, 1)
        self.fstn = STNkd(k=32)
        self.conv2 = nn.Conv1d(32, 64, 1)
        self.conv3 = nn.Conv1d(64, 128, 1)
        self.bn1 = nn.BatchNorm1d(32)
        self.bn2 = nn.BatchNorm1d(64)
        self.bn3 = nn.BatchNorm1d(128)
        self.fc1 = nn.Linear(128, 64)
        self.fc2 = nn.Linear(64, k)
        self.dropout = nn.Dropout(p=0.3)
        self.bn4 = nn.BatchNorm1d(64)

    def forward(self, x):
        trans = self.stn(x)
        x = x.transpose(2, 1)
        x = torch.bmm(x, trans)
        x = x.transpose(2, 1)
        x = F.relu(self.bn1(self.conv1(x)))
        trans_feat = self.fstn(x)
        x = torch.bmm(x.transpose(2, 1), trans_feat).transpose(2, 1)
        x = F.relu(self.bn2(self.conv2(x)))
        x = self.bn3(self.conv3(x))
        x = torch.max(x, 2, keepdim=True)[0].view(-1, 128)
        x = F.relu(self.bn4(self.dropout(self.fc1(x))))
        return F.log_softmax(self.fc2(x), dim=1), trans, trans_feat


def feature_transform_regularizer(trans):
    d = trans.size()[1]
    I = torch.eye(d)[None, :, :]  # noqa: E741
    return torch.mean(torch.norm(torch.bmm(trans, trans.transpose(2, 1)) - I, dim=(1, 2)))


def make_clouds(n, generator):
    labels = torch.randint(0, CLASSES, (n,), generator=generator)
    clouds = torch.empty(n, N_POINTS, 3)
    for i in range(n):
        if labels[i] == 0:  # sphere surface
            p = torch.randn(N_POINTS, 3, generator=generator)
            p = p / p.norm(dim=1, keepdim=True)
        elif labels[i] == 1:  # cube surface: push one coordinate to +-1
            p = torch.rand(N_POINTS, 3, generator=generator) * 2 - 1
            axis = torch.randint(0, 3, (N_POINTS,), generator=generator)
            sign = torch.randint(0, 2, (N_POINTS,), generator=generator).float() * 2 - 1
            p[torch.arange(N_POINTS), axis] = sign
        else:  # cylinder side
            theta = torch.rand(N_POINTS, generator=generator) * 2 * math.pi
            z = torch.rand(N_POINTS, generator=generator) * 2 - 1
            p = torch.stack([torch.cos(theta), torch.sin(theta), z], dim=1)
        clouds[i] = p + 0.02 * torch.randn(N_POINTS, 3, generator=generator)
    return clouds, labels


def random_rotation_z(batch):
    theta = torch.rand(batch.size(0)) * 2 * math.pi
    c, s = torch.cos(theta), torch.sin(theta)
    zeros, ones = torch.zeros_like(c), torch.ones_like(c)
    rot = torch.stack([c, -s, zeros, s, c, zeros, zeros, zeros, ones], dim=1).view(-1, 3, 3)
    return torch.bmm(batch, rot)


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    points, labels = make_clouds(384, g)
    test_points, test_labels = make_clouds(96, g)
    classifier = PointNetCls()
    optimizer = torch.optim.Adam(classifier.parameters(), lr=2e-3, betas=(0.9, 0.999))
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=4, gamma=0.5)

    def evaluate():
        classifier.eval()
        with torch.no_grad():
            pred, _, _ = classifier(test_points.transpose(2, 1))
        return pred.argmax(1).eq(test_labels).float().mean().item()

    for epoch in range(6):
        classifier.train()
        perm = torch.randperm(len(points))
        for i in range(0, len(points), 32):
            idx = perm[i : i + 32]
            pts = random_rotation_z(points[idx]).transpose(2, 1)
            optimizer.zero_grad()
            pred, trans, trans_feat = classifier(pts)
            loss = F.nll_loss(pred, labels[idx]) + 0.001 * feature_transform_regularizer(trans_feat)
            loss.backward()
            optimizer.step()
        scheduler.step()
        acc = evaluate()
        print(f"epoch {epoch}: loss {loss.item():.3f} test accuracy {acc:.3f}")
    assert trans.shape == (32, 3, 3) and trans_feat.shape == (32, 32, 32)
    assert acc > 0.85, acc

    # Max-pooling over points makes the network invariant to their order.
    classifier.eval()
    x = test_points[:4].transpose(2, 1)
    with torch.no_grad():
        a = classifier(x)[0]
        b = classifier(x[:, :, torch.randperm(N_POINTS)])[0]
    assert torch.allclose(a, b, atol=1e-5)
    # The regularizer is zero for orthogonal transforms.
    q, _ = torch.linalg.qr(torch.randn(2, 5, 5))
    assert feature_transform_regularizer(q).item() < 1e-5


if __name__ == "__main__":
    main()
