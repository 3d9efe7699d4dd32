"""A siamese network decides whether two inputs come from the same class.

Inputs are noisy points around five class centres. One shared encoder embeds
both inputs; exercises forward_once with view(size()[0], -1), torch.cat of the two
embeddings into a Sequential head, a Module.apply init with xavier_uniform_ and
bias.data.fill_, nn.Sigmoid + BCELoss, a contrastive term built from
F.pairwise_distance and torch.clamp, Adadelta with StepLR, torch.where(p > 0.5, 1, 0)
predictions, and F.cosine_similarity of the learned embeddings.
"""

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F
import flambeau.optim as optim
from flambeau.optim.lr_scheduler import StepLR

DIM, CLASSES = 20, 5


class SiameseNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Linear(DIM, 64), nn.ReLU(inplace=True), nn.Linear(64, 32), nn.ReLU(inplace=True)
        )
        self.fc_in_features = 32
        self.fc = nn.Sequential(
            nn.Linear(self.fc_in_features * 2, 64),
            nn.ReLU(inplace=True),
            nn.Linear(64, 1),
        )
        self.sigmoid = nn.Sigmoid()
        self.encoder.apply(self.init_weights)
        self.fc.apply(self.init_weights)

    def init_weights(self, m):
        if isinstance(m, nn.Linear):
            torch.nn.init.xavier_uniform_(m.weight)
            m.bias.data.fill_(0.01)

    def forward_once(self, x):
        output = self.encoder(x)
        return output.view(output.size()[0], -1)

    def forward(self, input1, input2):
        output1 = self.forward_once(input1)
        output2 = self.forward_once(input2)
        output = torch.cat((output1, output2), 1)
        output = self.fc(output)
        return self.sigmoid(output), output1, output2


def contrastive_loss(e1, e2, same, margin=2.0):
    distance = F.pairwise_distance(e1, e2)
    return torch.mean(
        same * distance.pow(2) + (1 - same) * torch.clamp(margin - distance, min=0.0).pow(2)
    )


def make_pairs(centres, n):
    c1 = torch.randint(0, CLASSES, (n,))
    same = torch.rand(n) < 0.5
    c2 = torch.where(same, c1, (c1 + torch.randint(1, CLASSES, (n,))) % CLASSES)
    x1 = centres[c1] + 0.5 * torch.randn(n, DIM)
    x2 = centres[c2] + 0.5 * torch.randn(n, DIM)
    return x1, x2, same.float()


def main():
    torch.manual_seed(1)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    centres = torch.randn(CLASSES, DIM)
    train = make_pairs(centres, 1024)
    test = make_pairs(centres, 256)

    model = SiameseNetwork().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.9)
    criterion = nn.BCELoss()

    def evaluate():
        model.eval()
        with torch.no_grad():
            x1, x2, targets = (t.to(device) for t in test)
            outputs, _, _ = model(x1, x2)
            outputs = outputs.squeeze()
            loss = criterion(outputs, targets).item()
            pred = torch.where(outputs > 0.5, 1, 0)
            correct = pred.eq(targets.view_as(pred)).sum().item()
        return loss, correct / len(targets)

    first_loss, _ = evaluate()
    for epoch in range(1, 9):
        model.train()
        x1_all, x2_all, targets_all = train
        for i in range(0, len(targets_all), 64):
            x1, x2 = x1_all[i : i + 64].to(device), x2_all[i : i + 64].to(device)
            targets = targets_all[i : i + 64].to(device)
            optimizer.zero_grad()
            outputs, e1, e2 = model(x1, x2)
            loss = criterion(outputs.squeeze(), targets) + 0.1 * contrastive_loss(e1, e2, targets)
            loss.backward()
            optimizer.step()
        test_loss, accuracy = evaluate()
        print(f"epoch {epoch}: test loss {test_loss:.4f} accuracy {accuracy:.3f}")
        scheduler.step()
    assert test_loss < first_loss / 3, (first_loss, test_loss)
    assert accuracy > 0.95, accuracy

    with torch.no_grad():
        x1, x2, same = test
        _, e1, e2 = model(x1.to(device), x2.to(device))
        similarity = F.cosine_similarity(e1, e2, dim=1)
    same = same.bool()
    assert similarity[same].mean().item() > similarity[~same].mean().item() + 0.3


if __name__ == "__main__":
    main()
