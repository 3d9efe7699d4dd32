"""An audio classifier on log-mel spectrograms computed with torch.stft.

In the style of keyword-spotting / sound-event examples that do their own front end
instead of torchaudio: synthetic one-second clips at 8 kHz (a rising chirp, a falling
chirp, a two-tone chord, an amplitude-modulated tone, each with random pitch, phase,
loudness and background noise), torch.stft with a Hann window (return_complex=True),
power spectrogram with .abs() ** 2, a triangular mel filterbank built by hand and
applied with torch.matmul, log compression, per-utterance normalization, SpecAugment
frequency and time masking with masked_fill, and a 2-D CNN with BatchNorm and global
average pooling. Checks the STFT of a pure tone peaks at the tone's bin, that
torch.istft inverts torch.stft, Parseval's theorem for torch.fft.rfft, and accuracy.
"""

import math

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F

SR, N_FFT, HOP, N_MELS, CLASSES = 8000, 256, 128, 32, 4


def hz_to_mel(f):
    return 2595.0 * math.log10(1.0 + f / 700.0)


def mel_filterbank(n_fft=N_FFT, n_mels=N_MELS, sr=SR):
    freqs = torch.fft.rfftfreq(n_fft, d=1.0 / sr)  # (n_fft // 2 + 1,)
    mels = torch.linspace(hz_to_mel(0.0), hz_to_mel(sr / 2), n_mels + 2)
    hz = 700.0 * (10 ** (mels / 2595.0) - 1.0)
    lower, center, upper = hz[:-2, None], hz[1:-1, None], hz[2:, None]
    up = (freqs - lower) / (center - lower)
    down = (upper - freqs) / (upper - center)
    return torch.clamp(torch.minimum(up, down), min=0.0)  # (n_mels, n_freqs)


def synth(kind, generator):
    t = torch.arange(SR) / SR
    u = lambda: torch.rand((), generator=generator).item()  # noqa: E731
    f0 = 300 + 900 * u()
    phase = 2 * math.pi * u()
    if kind == 0:  # rising chirp: f0 -> 2 f0
        wave = torch.sin(2 * math.pi * (f0 * t + 0.5 * f0 * t**2) + phase)
    elif kind == 1:  # falling chirp: 2 f0 -> f0
        wave = torch.sin(2 * math.pi * (2 * f0 * t - 0.5 * f0 * t**2) + phase)
    elif kind == 2:  # chord: f0 and 1.5 f0
        wave = 0.5 * torch.sin(2 * math.pi * f0 * t + phase) + 0.5 * torch.sin(3 * math.pi * f0 * t)
    else:  # tremolo: f0 modulated at 6-10 Hz
        wave = (0.6 + 0.4 * torch.sin(2 * math.pi * (6 + 4 * u()) * t)) * torch.sin(
            2 * math.pi * f0 * t + phase
        )
    loudness = 0.2 + 0.8 * u()
    return loudness * wave + 0.05 * torch.randn(SR, generator=generator)


def make_dataset(n, generator):
    labels = torch.randint(0, CLASSES, (n,), generator=generator)
    waves = torch.stack([synth(int(k), generator) for k in labels])
    return waves, labels


class LogMel(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("window", torch.hann_window(N_FFT))
        self.register_buffer("fbank", mel_filterbank())

    def forward(self, waves):
        spec = torch.stft(
            waves, n_fft=N_FFT, hop_length=HOP, window=self.window, return_complex=True
        )
        power = spec.abs() ** 2  # (B, freqs, frames)
        mel = torch.matmul(self.fbank, power)
        logmel = torch.log(mel + 1e-6)
        mean = logmel.mean(dim=(1, 2), keepdim=True)
        std = logmel.std(dim=(1, 2), keepdim=True)
        return ((logmel - mean) / (std + 1e-5)).unsqueeze(1)  # (B, 1, mels, frames)


def spec_augment(x, max_f=6, max_t=8):
    b, _, n_mels, n_frames = x.shape
    f0 = torch.randint(0, n_mels - max_f, (b, 1))
    fw = torch.randint(0, max_f + 1, (b, 1))
    t0 = torch.randint(0, n_frames - max_t, (b, 1))
    tw = torch.randint(0, max_t + 1, (b, 1))
    f = torch.arange(n_mels).unsqueeze(0)
    t = torch.arange(n_frames).unsqueeze(0)
    fmask = ((f >= f0) & (f < f0 + fw)).view(b, 1, n_mels, 1)
    tmask = ((t >= t0) & (t < t0 + tw)).view(b, 1, 1, n_frames)
    return x.masked_fill(fmask | tmask, 0.0)


class AudioCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.frontend = LogMel()

        def block(cin, cout):
            return nn.Sequential(
                nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2)
            )

        self.features = nn.Sequential(block(1, 16), block(16, 32), block(32, 32))
        self.head = nn.Linear(32, CLASSES)

    def forward(self, waves, augment=False):
        x = self.frontend(waves)
        if augment:
            x = spec_augment(x)
        x = self.features(x)
        return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)

    # A 1 kHz tone peaks in bin 1000 / (SR / N_FFT) = 32 of every frame (but the first,
    # which center=True pads by reflection).
    t = torch.arange(SR) / SR
    tone = torch.sin(2 * math.pi * 1000.0 * t)
    window = torch.hann_window(N_FFT)
    spec = torch.stft(tone, N_FFT, hop_length=HOP, window=window, return_complex=True)
    assert spec.shape == (N_FFT // 2 + 1, SR // HOP + 1) and spec.dtype == torch.complex64
    assert (spec.abs().argmax(dim=0)[1:] == 32).all()
    # istft inverts stft (the Hann window at 50% overlap satisfies the NOLA condition).
    noise = torch.randn(SR, generator=g)
    back = torch.istft(
        torch.stft(noise, N_FFT, hop_length=HOP, window=window, return_complex=True),
        N_FFT,
        hop_length=HOP,
        window=window,
        length=SR,
    )
    assert torch.allclose(back, noise, atol=1e-4), (back - noise).abs().max()
    # Parseval: sum |x|^2 = (|X_0|^2 + 2 sum |X_k|^2 + |X_N/2|^2) / N for a real signal.
    frame = noise[:N_FFT]
    X = torch.fft.rfft(frame)
    energy = (X[0].abs() ** 2 + 2 * (X[1:-1].abs() ** 2).sum() + X[-1].abs() ** 2) / N_FFT
    assert torch.allclose(energy, (frame**2).sum(), rtol=1e-4)
    fbank = mel_filterbank()
    assert fbank.shape == (N_MELS, N_FFT // 2 + 1) and (fbank.sum(1) > 0).all()

    train_x, train_y = make_dataset(512, g)
    test_x, test_y = make_dataset(200, g)
    model = AudioCNN()
    assert sorted(model.frontend.state_dict()) == ["fbank", "window"]
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-2)

    def accuracy():
        model.eval()
        with torch.no_grad():
            acc = (model(test_x).argmax(1) == test_y).float().mean().item()
        model.train()
        return acc

    acc0 = accuracy()
    for epoch in range(6):
        perm = torch.randperm(512)
        for i in range(0, 512, 32):
            idx = perm[i : i + 32]
            loss = F.cross_entropy(model(train_x[idx], augment=True), train_y[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        acc = accuracy()
        print(f"epoch {epoch}: loss {loss.item():.3f} test accuracy {acc:.3f}")
    assert acc > 0.9 and acc > acc0 + 0.4, (acc0, acc)


if __name__ == "__main__":
    main()
