"""Fast neural style transfer with a perceptual loss, on synthetic images.

Follows pytorch/examples' fast_neural_style: a TransformerNet of reflection-padded
convolutions, InstanceNorm2d(affine=True, track_running_stats=True), residual
blocks and nearest-neighbour upsampling; a frozen VGG-style feature extractor
returning a namedtuple of activations; a Gram-matrix style loss with torch.bmm;
mse_loss content loss; Adam; ImageNet-statistics normalization via
Tensor.new_tensor; and the checkpoint dance the example does when loading old
models (deleting running_* keys from the state_dict with a regex).
"""

import io
import re
from collections import namedtuple

import flambeau as torch
from flambeau import nn


class ConvLayer(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        self.reflection_pad = nn.ReflectionPad2d(kernel_size // 2)
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        return self.conv2d(self.reflection_pad(x))


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in1 = nn.InstanceNorm2d(channels, affine=True)
        self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in2 = nn.InstanceNorm2d(channels, affine=True)
        self.relu = nn.ReLU()

    def forward(self, x):
        residual = x
        out = self.relu(self.in1(self.conv1(x)))
        out = self.in2(self.conv2(out))
        return out + residual


class UpsampleConvLayer(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
        super().__init__()
        self.upsample = upsample
        self.reflection_pad = nn.ReflectionPad2d(kernel_size // 2)
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        if self.upsample:
            x = nn.functional.interpolate(x, mode="nearest", scale_factor=self.upsample)
        return self.conv2d(self.reflection_pad(x))


class TransformerNet(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.conv1 = ConvLayer(3, width, kernel_size=5, stride=1)
        self.in1 = nn.InstanceNorm2d(width, affine=True, track_running_stats=True)
        self.conv2 = ConvLayer(width, 2 * width, kernel_size=3, stride=2)
        self.in2 = nn.InstanceNorm2d(2 * width, affine=True, track_running_stats=True)
        self.res1 = ResidualBlock(2 * width)
        self.res2 = ResidualBlock(2 * width)
        self.deconv1 = UpsampleConvLayer(2 * width, width, kernel_size=3, stride=1, upsample=2)
        self.in4 = nn.InstanceNorm2d(width, affine=True)
        self.deconv3 = ConvLayer(width, 3, kernel_size=5, stride=1)
        self.relu = nn.ReLU()

    def forward(self, x):
        y = self.relu(self.in1(self.conv1(x)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.res2(self.res1(y))
        y = self.relu(self.in4(self.deconv1(y)))
        # The paper's scaled tanh keeps the output in the [0, 255] pixel range.
        return (torch.tanh(self.deconv3(y)) + 1) * 127.5


class Vgg(nn.Module):
    """A tiny VGG-like feature extractor standing in for the pretrained VGG16."""

    def __init__(self, requires_grad=False):
        super().__init__()
        features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(8, 8, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(8, 16, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(16, 16, 3, padding=1),
            nn.ReLU(inplace=True),
        )
        self.slice1 = nn.Sequential()
        self.slice2 = nn.Sequential()
        self.slice3 = nn.Sequential()
        for x in range(4):
            self.slice1.add_module(str(x), features[x])
        for x in range(4, 7):
            self.slice2.add_module(str(x), features[x])
        for x in range(7, 10):
            self.slice3.add_module(str(x), features[x])
        if not requires_grad:
            for param in self.parameters():
                param.requires_grad = False

    def forward(self, x):
        h = self.slice1(x)
        h_relu1 = h
        h = self.slice2(h)
        h_relu2 = h
        h = self.slice3(h)
        h_relu3 = h
        vgg_outputs = namedtuple("VggOutputs", ["relu1", "relu2", "relu3"])
        return vgg_outputs(h_relu1, h_relu2, h_relu3)


def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    return features.bmm(features_t) / (ch * h * w)


def normalize_batch(batch):
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch.div_(255.0)
    return (batch - mean) / std


def main():
    torch.manual_seed(42)
    content = torch.rand(16, 3, 16, 16) * 255
    # The "style": diagonal stripes in saturated colours.
    ii, jj = torch.meshgrid(torch.arange(16), torch.arange(16), indexing="ij")
    stripes = ((ii + jj) % 4 < 2).float()
    style = torch.stack([stripes * 255, (1 - stripes) * 200, stripes * 50]).unsqueeze(0)

    transformer = TransformerNet()
    vgg = Vgg(requires_grad=False)
    assert not any(p.requires_grad for p in vgg.parameters())
    optimizer = torch.optim.Adam(transformer.parameters(), 3e-2)
    mse_loss = torch.nn.MSELoss()

    features_style = vgg(normalize_batch(style.clone()))
    gram_style = [gram_matrix(y) for y in features_style]
    assert features_style._fields == ("relu1", "relu2", "relu3")
    assert gram_style[0].shape == (1, 8, 8)

    content_weight, style_weight = 1.0, 500.0
    history = []
    for step in range(40):
        idx = torch.randint(0, len(content), (4,))
        x = content[idx]
        n_batch = len(x)
        optimizer.zero_grad()
        y = transformer(x)
        assert y.shape == x.shape
        y = normalize_batch(y)
        x = normalize_batch(x.clone())
        features_y = vgg(y)
        features_x = vgg(x)
        content_loss = content_weight * mse_loss(features_y.relu2, features_x.relu2)
        style_loss = 0.0
        for ft_y, gm_s in zip(features_y, gram_style):
            gm_y = gram_matrix(ft_y)
            style_loss += mse_loss(gm_y, gm_s[:n_batch, :, :].expand_as(gm_y))
        style_loss *= style_weight
        total_loss = content_loss + style_loss
        total_loss.backward()
        optimizer.step()
        history.append((total_loss.item(), style_loss.item()))
        if step % 10 == 0:
            print(
                f"step {step}: content {content_loss.item():.4f} style {style_loss.item():.4f}"
                f" total {total_loss.item():.4f}"
            )
    first = [sum(h[i] for h in history[:5]) / 5 for i in range(2)]
    last = [sum(h[i] for h in history[-5:]) / 5 for i in range(2)]
    print(f"mean total/style loss: first 5 steps {first}, last 5 steps {last}")
    assert last[0] < first[0], (first, last)
    assert last[1] < 0.5 * first[1], (first, last)
    # The frozen loss network got no gradients.
    assert all(p.grad is None for p in vgg.parameters())

    # Save, then load the way the example's stylize() does: drop running stats keys.
    transformer.eval()
    buffer = io.BytesIO()
    torch.save(transformer.state_dict(), buffer)
    buffer.seek(0)
    state_dict = torch.load(buffer)
    assert "in1.running_mean" in state_dict and "in4.running_mean" not in state_dict
    for k in list(state_dict.keys()):
        if re.search(r"in\d+\.running_(mean|var)$", k):
            del state_dict[k]
    style_model = TransformerNet()
    missing, unexpected = style_model.load_state_dict(state_dict, strict=False)
    assert sorted(missing) == [
        "in1.running_mean",
        "in1.running_var",
        "in2.running_mean",
        "in2.running_var",
    ]
    assert unexpected == []
    style_model.eval()
    with torch.no_grad():
        out = style_model(content[:2]).clamp(0, 255)
    assert out.shape == (2, 3, 16, 16) and out.dtype == torch.float32
    img = out[0].clone().clamp(0, 255).numpy()
    img = img.transpose(1, 2, 0).astype("uint8")
    assert img.shape == (16, 16, 3)


if __name__ == "__main__":
    main()
