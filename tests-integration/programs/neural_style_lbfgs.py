"""Neural style transfer by optimizing the image itself with L-BFGS.

Follows the PyTorch tutorial "Neural Transfer Using PyTorch": ContentLoss and StyleLoss
modules that store a detached target and compute their loss in forward (returning the
input unchanged), a Normalization module with mean/std viewed as (-1, 1, 1), a new
nn.Sequential built by walking a feature network's children, renaming layers and
inserting loss modules after chosen convolutions, then trimming everything after the
last loss; the input image is the parameter (requires_grad_(True)) of an
optim.LBFGS([input_img]) driven by a closure that clamps the image in place under
no_grad.
"""

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn, optim

SIDE = 24


class ContentLoss(nn.Module):
    def __init__(self, target):
        super().__init__()
        self.target = target.detach()

    def forward(self, input):
        self.loss = F.mse_loss(input, self.target)
        return input


def gram_matrix(input):
    a, b, c, d = input.size()
    features = input.view(a * b, c * d)
    G = torch.mm(features, features.t())
    return G.div(a * b * c * d)


class StyleLoss(nn.Module):
    def __init__(self, target_feature):
        super().__init__()
        self.target = gram_matrix(target_feature).detach()

    def forward(self, input):
        G = gram_matrix(input)
        self.loss = F.mse_loss(G, self.target)
        return input


class Normalization(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.mean = torch.tensor(mean).view(-1, 1, 1)
        self.std = torch.tensor(std).view(-1, 1, 1)

    def forward(self, img):
        return (img - self.mean) / self.std


def make_features():
    """A small VGG-like stack standing in for the pretrained vgg19().features."""
    torch.manual_seed(123)
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1),
        nn.ReLU(inplace=True),
        nn.Conv2d(16, 16, 3, padding=1),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(inplace=True),
        nn.Conv2d(32, 32, 3, padding=1),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 32, 3, padding=1),
        nn.ReLU(inplace=True),
    ).eval()


def get_style_model_and_losses(
    cnn, mean, std, style_img, content_img, content_layers, style_layers
):
    normalization = Normalization(mean, std)
    content_losses, style_losses = [], []
    model = nn.Sequential(normalization)
    i = 0
    for layer in cnn.children():
        if isinstance(layer, nn.Conv2d):
            i += 1
            name = f"conv_{i}"
        elif isinstance(layer, nn.ReLU):
            name = f"relu_{i}"
            layer = nn.ReLU(inplace=False)
        elif isinstance(layer, nn.MaxPool2d):
            name = f"pool_{i}"
        else:
            raise RuntimeError(f"Unrecognized layer: {layer.__class__.__name__}")
        model.add_module(name, layer)
        if name in content_layers:
            target = model(content_img).detach()
            content_loss = ContentLoss(target)
            model.add_module(f"content_loss_{i}", content_loss)
            content_losses.append(content_loss)
        if name in style_layers:
            target_feature = model(style_img).detach()
            style_loss = StyleLoss(target_feature)
            model.add_module(f"style_loss_{i}", style_loss)
            style_losses.append(style_loss)
    for i in range(len(model) - 1, -1, -1):
        if isinstance(model[i], (ContentLoss, StyleLoss)):
            break
    model = model[: (i + 1)]
    return model, style_losses, content_losses


def run_style_transfer(
    cnn,
    mean,
    std,
    content_img,
    style_img,
    input_img,
    num_steps=60,
    style_weight=1e4,
    content_weight=1,
):
    model, style_losses, content_losses = get_style_model_and_losses(
        cnn,
        mean,
        std,
        style_img,
        content_img,
        ["conv_4"],
        ["conv_1", "conv_2", "conv_3", "conv_4", "conv_5"],
    )
    input_img.requires_grad_(True)
    model.eval()
    model.requires_grad_(False)
    optimizer = optim.LBFGS([input_img])
    history = []
    run = [0]
    while run[0] <= num_steps:

        def closure():
            with torch.no_grad():
                input_img.clamp_(0, 1)
            optimizer.zero_grad()
            model(input_img)
            style_score = sum(sl.loss for sl in style_losses) * style_weight
            content_score = sum(cl.loss for cl in content_losses) * content_weight
            loss = style_score + content_score
            loss.backward()
            run[0] += 1
            history.append((style_score.item(), content_score.item()))
            return style_score + content_score

        optimizer.step(closure)
    with torch.no_grad():
        input_img.clamp_(0, 1)
    return input_img, model, history


def main():
    torch.manual_seed(0)
    yy, xx = torch.meshgrid(torch.linspace(0, 1, SIDE), torch.linspace(0, 1, SIDE), indexing="ij")
    content_img = torch.stack([xx, yy, 1 - xx * yy]).unsqueeze(0)
    stripes = (((xx + yy) * 6).floor() % 2).float()
    style_img = torch.stack([stripes, 0.2 * torch.ones_like(stripes), 1 - stripes]).unsqueeze(0)
    assert style_img.size() == content_img.size()
    cnn = make_features()
    mean = [0.485, 0.456, 0.406]
    std = [0.229, 0.224, 0.225]
    input_img = content_img.clone()

    output, model, history = run_style_transfer(cnn, mean, std, content_img, style_img, input_img)
    names = [n for n, _ in model.named_children()]
    print("model:", names)
    assert names[0] == "0" and names[-1] == "style_loss_5" and "content_loss_4" in names
    assert isinstance(model, nn.Sequential) and len(model) == len(names)
    assert output is input_img and output.requires_grad
    assert 0 <= output.min().item() and output.max().item() <= 1
    (s0, c0), (s1, c1) = history[0], history[-1]
    print(
        f"{len(history)} closure evaluations: style {s0:.3f} -> {s1:.3f},"
        f" content {c0:.4f} -> {c1:.4f}"
    )
    assert c0 == 0.0  # it starts from the content image
    # L-BFGS without a line search (as the tutorial runs it) bounces: in PyTorch too the
    # style score jumps up to 7x between evaluations, and a one-ulp change in the input
    # image (the order gradients are summed in) changes where the last evaluation lands.
    # Progress is the best score reached, and the median of the last quarter below the start.
    best = min(s for s, _ in history)
    late = sorted(s for s, _ in history[-(len(history) // 4) :])
    assert best < 0.5 * s0 and late[len(late) // 2] < s0, (s0, best, late)
    # The network itself was not trained.
    assert all(p.grad is None for p in cnn.parameters())
    assert not output.equal(content_img)


if __name__ == "__main__":
    main()
