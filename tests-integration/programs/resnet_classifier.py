"""A small ResNet trained with the train/val phase loop of the image-classification
tutorials, then fine-tuned with a frozen backbone.

Images are 16x16 noisy textures of three kinds (horizontal stripes, vertical
stripes, checkerboard). Exercises residual BasicBlocks with a downsample
Sequential, kaiming_normal_(mode="fan_out") and constant_ init over modules(),
AdaptiveAvgPool2d((1, 1)), SGD with momentum/nesterov/weight decay under a
CosineAnnealingLR, torch.flip augmentation, torch.set_grad_enabled(phase ==
"train"), torch.max(outputs, 1), running_corrects.double(), copy.deepcopy of the
best state_dict, per-class accuracy from zip(labels, predictions), freezing
parameters with requires_grad = False and replacing the fc head, and the usual
seed_everything (random, NumPy, torch, torch.cuda, cudnn flags) on a CPU-only machine.
"""

import copy
import os
import random
import tempfile

import numpy as np

import flambeau as torch
import flambeau.nn as nn
import flambeau.optim as optim
from flambeau.optim import lr_scheduler

CLASSES = ("horizontal", "vertical", "checker")


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(
            inplanes, planes, kernel_size=3, stride=stride, padding=1, bias=False
        )
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    def __init__(self, layers=(1, 1), num_classes=3, width=8):
        super().__init__()
        self.inplanes = width
        self.conv1 = nn.Conv2d(1, width, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = self._make_layer(width, layers[0])
        self.layer2 = self._make_layer(width * 2, layers[1], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width * 2 * BasicBlock.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def _make_layer(self, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * BasicBlock.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(
                    self.inplanes, planes * BasicBlock.expansion, 1, stride=stride, bias=False
                ),
                nn.BatchNorm2d(planes * BasicBlock.expansion),
            )
        layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * BasicBlock.expansion
        for _ in range(1, blocks):
            layers.append(BasicBlock(self.inplanes, planes))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer2(self.layer1(x))
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.fc(x)


def make_textures(n, generator):
    labels = torch.randint(0, len(CLASSES), (n,), generator=generator)
    r = torch.arange(16).view(16, 1).expand(16, 16)
    c = torch.arange(16).view(1, 16).expand(16, 16)
    patterns = torch.stack([(r // 2) % 2, (c // 2) % 2, ((r // 2) + (c // 2)) % 2]).float()
    images = patterns[labels].unsqueeze(1) + 0.8 * torch.randn(n, 1, 16, 16, generator=generator)
    return images, labels


def train_model(model, criterion, optimizer, scheduler, data, device, num_epochs):
    best_model_wts = copy.deepcopy(model.state_dict())
    best_acc = 0.0
    for epoch in range(num_epochs):
        for phase in ["train", "val"]:
            if phase == "train":
                model.train()
            else:
                model.eval()
            images, labels_all = data[phase]
            running_loss = 0.0
            running_corrects = 0
            for i in range(0, len(images), 32):
                inputs = images[i : i + 32].to(device)
                labels = labels_all[i : i + 32].to(device)
                if phase == "train" and epoch % 2 == 1:
                    inputs = torch.flip(inputs, dims=[3])  # horizontal flip augmentation
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == "train"):
                    outputs = model(inputs)
                    _, preds = torch.max(outputs, 1)
                    loss = criterion(outputs, labels)
                    if phase == "train":
                        loss.backward()
                        optimizer.step()
                running_loss += loss.item() * inputs.size(0)
                running_corrects += torch.sum(preds == labels.data)
            if phase == "train":
                scheduler.step()
            epoch_loss = running_loss / len(images)
            epoch_acc = running_corrects.double() / len(images)
            print(f"Epoch {epoch} {phase} Loss: {epoch_loss:.4f} Acc: {epoch_acc:.4f}")
            if phase == "val" and epoch_acc > best_acc:
                best_acc = epoch_acc
                best_model_wts = copy.deepcopy(model.state_dict())
    print(f"Best val Acc: {best_acc:4f}")
    model.load_state_dict(best_model_wts)
    return model, best_acc


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def main():
    seed_everything(0)
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    g = torch.Generator().manual_seed(1)
    data = {"train": make_textures(384, g), "val": make_textures(96, g)}

    model = ResNet().to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(
        model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4
    )
    scheduler = lr_scheduler.CosineAnnealingLR(optimizer, T_max=4)
    model, best_acc = train_model(model, criterion, optimizer, scheduler, data, device, 4)
    assert best_acc.item() > 0.9, best_acc

    # Per-class accuracy, as the CIFAR-10 tutorial prints it.
    correct_pred = {classname: 0 for classname in CLASSES}
    total_pred = {classname: 0 for classname in CLASSES}
    model.eval()
    with torch.no_grad():
        images, labels = data["val"]
        outputs = model(images.to(device))
        _, predictions = torch.max(outputs, 1)
        for label, prediction in zip(labels, predictions):
            if label == prediction:
                correct_pred[CLASSES[label]] += 1
            total_pred[CLASSES[label]] += 1
    for classname, correct_count in correct_pred.items():
        accuracy = 100 * float(correct_count) / total_pred[classname]
        print(f"Accuracy for class: {classname:10s} is {accuracy:.1f} %")
        assert accuracy > 80, (classname, accuracy)

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "resnet.pth")
        torch.save(model.state_dict(), path)
        reloaded = ResNet()
        reloaded.load_state_dict(torch.load(path, weights_only=True))
    reloaded.eval()
    with torch.no_grad():
        assert torch.equal(reloaded(images[:8]), model(images[:8].to(device)).cpu())

    # Fine-tune as a fixed feature extractor: freeze everything, new two-way head
    # ("stripes" vs "checker").
    for param in model.parameters():
        param.requires_grad = False
    num_ftrs = model.fc.in_features
    model.fc = nn.Linear(num_ftrs, 2)
    model = model.to(device)
    frozen_before = model.conv1.weight.clone()
    optimizer_conv = optim.SGD(model.fc.parameters(), lr=0.05, momentum=0.9)
    exp_lr_scheduler = lr_scheduler.StepLR(optimizer_conv, step_size=2, gamma=0.1)
    binary = {phase: (images, (labels == 2).long()) for phase, (images, labels) in data.items()}
    model, best_acc = train_model(
        model, criterion, optimizer_conv, exp_lr_scheduler, binary, device, 3
    )
    assert best_acc.item() > 0.9, best_acc
    assert model.conv1.weight.grad is None
    assert torch.equal(model.conv1.weight, frozen_before)
    trainable = [name for name, p in model.named_parameters() if p.requires_grad]
    assert trainable == ["fc.weight", "fc.bias"], trainable


if __name__ == "__main__":
    main()
