"""A variational autoencoder on synthetic 8x8 "bar" images.

Exercises the reparameterization trick with torch.randn_like, binary cross
entropy with reduction="sum" plus the analytic KL term, Adam, evaluation under
no_grad, decoding samples drawn from the prior, and torch.cat of originals and
reconstructions (the comparison grid a VAE example saves as an image).
"""

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn, optim

SIDE = 8
PIXELS = SIDE * SIDE
LATENT = 4


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(PIXELS, 48)
        self.fc21 = nn.Linear(48, LATENT)
        self.fc22 = nn.Linear(48, LATENT)
        self.fc3 = nn.Linear(LATENT, 48)
        self.fc4 = nn.Linear(48, PIXELS)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, PIXELS))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    """Reconstruction + KL divergence summed over all elements and the batch."""
    bce = F.binary_cross_entropy(recon_x, x.view(-1, PIXELS), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def make_bars(n):
    """Each image lights up one full row or one full column, on a dim noisy background."""
    images = torch.rand(n, 1, SIDE, SIDE) * 0.1
    which = torch.randint(0, 2 * SIDE, (n,))
    for i in range(n):
        k = which[i].item()
        if k < SIDE:
            images[i, 0, k, :] = 0.95
        else:
            images[i, 0, :, k - SIDE] = 0.95
    return images


def main():
    torch.manual_seed(1)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    batch_size = 32
    train_images = make_bars(512)
    test_images = make_bars(128)

    model = VAE().to(device)
    optimizer = optim.Adam(model.parameters(), lr=1e-2)

    def test():
        model.eval()
        test_loss = 0
        with torch.no_grad():
            for i in range(0, len(test_images), batch_size):
                data = test_images[i : i + batch_size].to(device)
                recon_batch, mu, logvar = model(data)
                test_loss += loss_function(recon_batch, data, mu, logvar).item()
                if i == 0:
                    n = min(data.size(0), 8)
                    comparison = torch.cat(
                        [data[:n], recon_batch.view(batch_size, 1, SIDE, SIDE)[:n]]
                    )
                    assert comparison.shape == (2 * n, 1, SIDE, SIDE)
        return test_loss / len(test_images)

    initial = test()
    print(f"initial test loss {initial:.2f}")
    for epoch in range(1, 11):
        model.train()
        train_loss = 0
        perm = torch.randperm(len(train_images))
        for i in range(0, len(train_images), batch_size):
            data = train_images[perm[i : i + batch_size]].to(device)
            optimizer.zero_grad()
            recon_batch, mu, logvar = model(data)
            loss = loss_function(recon_batch, data, mu, logvar)
            loss.backward()
            train_loss += loss.item()
            optimizer.step()
        test_loss = test()
        print(
            f"====> Epoch: {epoch} Average loss: {train_loss / len(train_images):.4f}"
            f"  Test set loss: {test_loss:.4f}"
        )
    assert test_loss < 0.6 * initial, (initial, test_loss)

    with torch.no_grad():
        sample = torch.randn(16, LATENT).to(device)
        sample = model.decode(sample).cpu()
    assert sample.shape == (16, PIXELS)
    assert bool(((sample >= 0) & (sample <= 1)).all())
    # Decoded prior samples should look like bars: a few bright pixels, mostly dark.
    bright = (sample > 0.5).float().sum(dim=1)
    assert bright.mean().item() < PIXELS / 2, bright


if __name__ == "__main__":
    main()
