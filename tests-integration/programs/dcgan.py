"""A DCGAN on 16x16 synthetic images, with the alternating D/G updates of the classic example.

Real images are a bright disk on a dark background, jittered by a pixel.
Exercises ConvTranspose2d/Conv2d/BatchNorm2d stacks in nn.Sequential,
LeakyReLU(inplace=True), a weights_init function applied with Module.apply that
dispatches on the class name, BCELoss, torch.full labels refilled with fill_,
detach() of the fake batch for the discriminator step, Adam with betas, and
per-epoch checkpoint save/load of both networks.
"""

import os
import random
import tempfile

import flambeau as torch
import flambeau.nn as nn
import flambeau.optim as optim

nc, nz, ngf, ndf = 1, 8, 16, 16


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        torch.nn.init.normal_(m.weight, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        torch.nn.init.normal_(m.weight, 1.0, 0.02)
        torch.nn.init.zeros_(m.bias)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            # nz x 1 x 1 -> (ngf*2) x 4 x 4
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            # -> ngf x 8 x 8
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            # -> nc x 16 x 16
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            # nc x 16 x 16 -> ndf x 8 x 8
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            # -> (ndf*2) x 4 x 4
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            # -> 1 x 1 x 1
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, input):
        output = self.main(input)
        return output.view(-1, 1).squeeze(1)


def real_images(n):
    ys = torch.arange(16, dtype=torch.float32).view(1, 16, 1)
    xs = torch.arange(16, dtype=torch.float32).view(1, 1, 16)
    shift = torch.randint(-1, 2, (n, 2, 1, 1)).float()
    cy, cx = 7.5 + shift[:, 0], 7.5 + shift[:, 1]
    disk = ((ys - cy) ** 2 + (xs - cx) ** 2) < 16.0
    # In [-1, 1] like images normalized with mean 0.5, std 0.5.
    return torch.where(disk, 1.0, -1.0).unsqueeze(1)


def main():
    manual_seed = 999
    random.seed(manual_seed)
    torch.manual_seed(manual_seed)
    torch.use_deterministic_algorithms(True)  # reproducible results
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    batch_size = 32

    netG = Generator().to(device)
    netG.apply(weights_init)
    netD = Discriminator().to(device)
    netD.apply(weights_init)

    criterion = nn.BCELoss()
    fixed_noise = torch.randn(64, nz, 1, 1, device=device)
    real_label, fake_label = 1, 0
    optimizerD = optim.Adam(netD.parameters(), lr=0.002, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=0.002, betas=(0.5, 0.999))

    target_mean = real_images(512).mean(dim=0)

    def distance_to_real():
        netG.eval()
        with torch.no_grad():
            fake = netG(fixed_noise)
        netG.train()
        return (fake.mean(dim=0) - target_mean).abs().mean().item()

    start_distance = distance_to_real()
    d_real_scores = []
    with tempfile.TemporaryDirectory() as outf:
        for epoch in range(5):
            for i in range(40):
                # (1) Update D: maximize log(D(x)) + log(1 - D(G(z)))
                netD.zero_grad()
                real_cpu = real_images(batch_size).to(device)
                b_size = real_cpu.size(0)
                label = torch.full((b_size,), real_label, dtype=real_cpu.dtype, device=device)
                output = netD(real_cpu)
                errD_real = criterion(output, label)
                errD_real.backward()
                D_x = output.mean().item()

                noise = torch.randn(b_size, nz, 1, 1, device=device)
                fake = netG(noise)
                label.fill_(fake_label)
                output = netD(fake.detach())
                errD_fake = criterion(output, label)
                errD_fake.backward()
                D_G_z1 = output.mean().item()
                errD = errD_real + errD_fake
                optimizerD.step()

                # (2) Update G: maximize log(D(G(z)))
                netG.zero_grad()
                label.fill_(real_label)
                output = netD(fake)
                errG = criterion(output, label)
                errG.backward()
                D_G_z2 = output.mean().item()
                optimizerG.step()
                d_real_scores.append(D_x)
                if i % 10 == 0:
                    print(
                        f"[{epoch}][{i}] Loss_D: {errD.item():.4f} Loss_G: {errG.item():.4f} "
                        f"D(x): {D_x:.4f} D(G(z)): {D_G_z1:.4f} / {D_G_z2:.4f}"
                    )
            torch.save(netG.state_dict(), f"{outf}/netG_epoch_{epoch}.pth")
            torch.save(netD.state_dict(), f"{outf}/netD_epoch_{epoch}.pth")

        end_distance = distance_to_real()
        print(f"mean-image distance {start_distance:.3f} -> {end_distance:.3f}")
        assert end_distance < start_distance / 2, (start_distance, end_distance)
        assert all(0.0 < s < 1.0 for s in d_real_scores)

        restored = Generator().to(device)
        restored.load_state_dict(torch.load(os.path.join(outf, "netG_epoch_4.pth")))
    restored.eval()
    netG.eval()
    with torch.no_grad():
        assert torch.equal(restored(fixed_noise), netG(fixed_noise))


if __name__ == "__main__":
    main()
