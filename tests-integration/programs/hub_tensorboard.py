"""Loading a model through torch.hub and logging its training to TensorBoard.

In the style of the torch.hub and TensorBoard tutorials: a hubconf.py exposing an
entrypoint with `dependencies`, torch.hub.load with source="local",
pretrained weights fetched with torch.hub.load_state_dict_from_url (a file://
URL whose name carries the sha256 prefix, checked with check_hash=True, cached
under torch.hub.get_dir()), fine-tuning with the backbone frozen via
requires_grad_(False), and torch.utils.tensorboard.SummaryWriter logging scalars,
histograms, text and hparams, read back with TensorBoard's EventAccumulator.
"""

import hashlib
import os
import shutil
import tempfile
import textwrap

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn
from flambeau.utils.tensorboard import SummaryWriter

HUBCONF = '''
"""A tiny hub repository."""
dependencies = ["flambeau"]

import flambeau as torch
from flambeau import nn


class TinyNet(nn.Module):
    def __init__(self, classes=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        return self.fc(self.backbone(x))


def tiny_net(pretrained=False, classes=3, weights_url=None, **kwargs):
    """TinyNet: an MLP over 8 features.

    pretrained (bool): load weights from weights_url
    """
    model = TinyNet(classes=classes)
    if pretrained:
        state_dict = torch.hub.load_state_dict_from_url(
            weights_url, progress=False, check_hash=True
        )
        model.load_state_dict(state_dict)
    return model


def _private_helper():
    return None
'''


def make_data(n, generator):
    x = torch.randn(n, 8, generator=generator)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    return x, y


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    root = tempfile.mkdtemp()
    try:
        repo = os.path.join(root, "tiny_repo")
        os.makedirs(repo)
        with open(os.path.join(repo, "hubconf.py"), "w") as f:
            f.write(textwrap.dedent(HUBCONF))
        torch.hub.set_dir(os.path.join(root, "hub_cache"))
        assert torch.hub.get_dir() == os.path.join(root, "hub_cache")

        # "Pretrained" weights: a state_dict saved under a name carrying its sha256 prefix.
        pretrained = torch.hub.load(repo, "tiny_net", source="local", classes=3)
        x_train, y_train = make_data(512, g)
        opt = torch.optim.Adam(pretrained.parameters(), lr=1e-2)
        for _ in range(100):
            loss = F.cross_entropy(pretrained(x_train), y_train)
            opt.zero_grad()
            loss.backward()
            opt.step()
        tmp_path = os.path.join(root, "weights.pth")
        torch.save(pretrained.state_dict(), tmp_path)
        with open(tmp_path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        weights_path = os.path.join(root, f"tinynet-{digest[:10]}.pth")
        shutil.move(tmp_path, weights_path)
        url = "file://" + weights_path

        model = torch.hub.load(repo, "tiny_net", source="local", pretrained=True, weights_url=url)
        cached = os.path.join(torch.hub.get_dir(), "checkpoints", os.path.basename(weights_path))
        assert os.path.exists(cached), os.listdir(torch.hub.get_dir())
        for (k, a), b in zip(model.state_dict().items(), pretrained.state_dict().values()):
            assert torch.equal(a, b), k

        # A corrupted download fails the hash check.
        bad_path = os.path.join(root, f"broken-{digest[:10]}.pth")
        with open(bad_path, "wb") as f:
            f.write(b"not a checkpoint")
        try:
            torch.hub.load_state_dict_from_url(
                "file://" + bad_path,
                model_dir=os.path.join(root, "other"),
                check_hash=True,
                progress=False,
            )
        except RuntimeError as e:
            assert "invalid hash value" in str(e), e
        else:
            raise AssertionError("expected a hash mismatch")

        # Fine-tune a new head on a different task with the backbone frozen.
        model.backbone.requires_grad_(False)
        model.fc = nn.Linear(32, 2)
        trainable = [n for n, p in model.named_parameters() if p.requires_grad]
        assert trainable == ["fc.weight", "fc.bias"], trainable
        frozen = [p.clone() for p in model.backbone.parameters()]
        x2 = torch.randn(512, 8, generator=g)
        y2 = (x2[:, 0] * x2[:, 1] > 0).long() | (x2[:, 0] > 1).long()
        optimizer = torch.optim.SGD(
            filter(lambda p: p.requires_grad, model.parameters()), lr=0.1, momentum=0.9
        )

        logdir = os.path.join(root, "runs", "finetune")
        writer = SummaryWriter(logdir)
        losses = []
        for step in range(60):
            logits = model(x2)
            loss = F.cross_entropy(logits, y2)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            writer.add_scalar("Loss/train", loss.item(), step)
            writer.add_scalar(
                "Accuracy/train", (logits.argmax(1) == y2).float().mean().item(), step
            )
            if step % 20 == 0:
                writer.add_histogram("fc.weight", model.fc.weight, step)
        writer.add_text("notes", "fine-tuned head only", 0)
        writer.add_hparams({"lr": 0.1, "momentum": 0.9}, {"hparam/final_loss": losses[-1]})
        writer.flush()
        writer.close()
        print(f"fine-tuning loss {losses[0]:.3f} -> {losses[-1]:.3f}")
        assert losses[-1] < 0.8 * losses[0], losses
        for p, q in zip(model.backbone.parameters(), frozen):
            assert torch.equal(p, q) and p.grad is None

        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

        acc = EventAccumulator(logdir)
        acc.Reload()
        tags = acc.Tags()
        assert {"Loss/train", "Accuracy/train"} <= set(tags["scalars"]), tags
        assert "fc.weight" in tags["histograms"], tags
        events = acc.Scalars("Loss/train")
        assert [e.step for e in events] == list(range(60))
        assert abs(events[-1].value - losses[-1]) < 1e-6
    finally:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
