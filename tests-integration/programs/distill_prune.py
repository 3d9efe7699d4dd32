"""Knowledge distillation into a small student, then magnitude pruning of the student.

In the style of the PyTorch knowledge-distillation and pruning tutorials: the
student is trained on a mix of hard-label cross entropy and the
temperature-softened KL divergence to the teacher (nn.KLDivLoss with
reduction="batchmean", scaled by T**2) plus a CosineEmbeddingLoss between
hidden representations; then torch.nn.utils.prune: l1_unstructured on one
layer, ln_structured on another, global_unstructured across layers,
weight_orig/weight_mask in the state_dict, the pruning forward pre-hook,
prune.is_pruned, and prune.remove making pruning permanent.
"""

import flambeau as torch
import flambeau.nn.functional as F
from flambeau import nn
from flambeau.nn.utils import prune

FEATURES, CLASSES = 20, 4


class Teacher(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Linear(FEATURES, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU()
        )
        self.classifier = nn.Linear(64, CLASSES)

    def forward(self, x):
        h = self.features(x)
        return self.classifier(h), h


class Student(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(FEATURES, 32)
        self.fc2 = nn.Linear(32, 64)
        self.classifier = nn.Linear(64, CLASSES)

    def forward(self, x):
        h = F.relu(self.fc2(F.relu(self.fc1(x))))
        return self.classifier(h), h


def make_data(n, generator, w):
    x = torch.randn(n, FEATURES, generator=generator)
    y = (x @ w[0] + 0.5 * torch.tanh(x @ w[1])).argmax(1)
    return x, y


def accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        return (model(x)[0].argmax(1) == y).float().mean().item()


def sparsity(t):
    return float(torch.sum(t == 0)) / float(t.nelement())


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    w = (torch.randn(FEATURES, CLASSES, generator=g), torch.randn(FEATURES, CLASSES, generator=g))
    x_train, y_train = make_data(2048, g, w)
    x_test, y_test = make_data(512, g, w)

    teacher = Teacher()
    opt = torch.optim.Adam(teacher.parameters(), lr=3e-3)
    for _epoch in range(8):
        teacher.train()
        for i in range(0, len(x_train), 128):
            loss = F.cross_entropy(teacher(x_train[i : i + 128])[0], y_train[i : i + 128])
            opt.zero_grad()
            loss.backward()
            opt.step()
    teacher_acc = accuracy(teacher, x_test, y_test)
    print(f"teacher accuracy {teacher_acc:.3f}")
    assert teacher_acc > 0.85, teacher_acc

    # KLDivLoss(batchmean) takes log-probabilities as input and probabilities as target.
    p = torch.tensor([[0.25, 0.75]])
    q = torch.tensor([[0.5, 0.5]])
    kl = nn.KLDivLoss(reduction="batchmean")(q.log(), p).item()
    expected = (
        0.25 * torch.log(torch.tensor(0.5)).item() + 0.75 * torch.log(torch.tensor(1.5)).item()
    )
    assert abs(kl - expected) < 1e-6
    assert (
        abs(
            nn.KLDivLoss(reduction="batchmean", log_target=True)(q.log(), p.log()).item() - expected
        )
        < 1e-6
    )

    student = Student()
    T, soft_weight, ce_weight, cos_weight = 2.0, 0.25, 0.75, 0.1
    kl_loss = nn.KLDivLoss(reduction="batchmean")
    cosine_loss = nn.CosineEmbeddingLoss()
    optimizer = torch.optim.Adam(student.parameters(), lr=3e-3)
    teacher.eval()
    for epoch in range(8):
        student.train()
        for i in range(0, len(x_train), 128):
            xb, yb = x_train[i : i + 128], y_train[i : i + 128]
            with torch.no_grad():
                teacher_logits, teacher_hidden = teacher(xb)
            student_logits, student_hidden = student(xb)
            soft_targets = F.softmax(teacher_logits / T, dim=-1)
            soft_prob = F.log_softmax(student_logits / T, dim=-1)
            distill = kl_loss(soft_prob, soft_targets) * (T**2)
            hidden = cosine_loss(student_hidden, teacher_hidden, target=torch.ones(xb.size(0)))
            loss = (
                soft_weight * distill
                + ce_weight * F.cross_entropy(student_logits, yb)
                + cos_weight * hidden
            )
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if epoch % 2 == 1:
            print(
                f"epoch {epoch}: loss {loss.item():.3f}"
                f" student accuracy {accuracy(student, x_test, y_test):.3f}"
            )
    student_acc = accuracy(student, x_test, y_test)
    assert student_acc > 0.8, student_acc

    # Pruning.
    prune.l1_unstructured(student.fc1, name="weight", amount=0.3)
    assert sorted(n for n, _ in student.fc1.named_parameters()) == ["bias", "weight_orig"]
    assert [n for n, _ in student.fc1.named_buffers()] == ["weight_mask"]
    assert abs(sparsity(student.fc1.weight) - 0.3) < 0.01
    assert len(student.fc1._forward_pre_hooks) == 1
    # The smallest-magnitude 30% were removed.
    kept = student.fc1.weight_orig.detach().abs()[student.fc1.weight_mask.bool()]
    dropped = student.fc1.weight_orig.detach().abs()[~student.fc1.weight_mask.bool()]
    assert kept.min() >= dropped.max()

    prune.ln_structured(student.fc2, name="weight", amount=0.25, n=2, dim=0)
    rows_zero = (student.fc2.weight == 0).all(dim=1)
    assert rows_zero.sum().item() == 16

    parameters_to_prune = (
        (student.fc1, "weight"),
        (student.fc2, "weight"),
        (student.classifier, "weight"),
    )
    total = sum(m.weight.nelement() for m, _ in parameters_to_prune)
    before = sum(float(torch.sum(m.weight == 0)) for m, _ in parameters_to_prune)
    prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured, amount=0.5)
    zeros = sum(float(torch.sum(m.weight == 0)) for m, _ in parameters_to_prune)
    print(f"global sparsity {zeros / total:.3f}")
    # Iterative pruning: the amount applies to the weights the earlier masks left.
    assert zeros - before == round(0.5 * (total - before)), (before, zeros, total)
    assert "fc1.weight_orig" in student.state_dict() and "fc1.weight_mask" in student.state_dict()
    assert prune.is_pruned(student)
    pruned_acc = accuracy(student, x_test, y_test)
    print(f"accuracy after pruning half the weights {pruned_acc:.3f}")

    # Fine-tune: the masks keep pruned weights at zero.
    optimizer = torch.optim.Adam(student.parameters(), lr=1e-3)
    for i in range(0, len(x_train), 128):
        loss = F.cross_entropy(student(x_train[i : i + 128])[0], y_train[i : i + 128])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert abs(sparsity(student.fc1.weight) - sparsity(student.fc1.weight_mask)) < 1e-9
    finetuned_acc = accuracy(student, x_test, y_test)
    print(f"after fine-tuning {finetuned_acc:.3f}")
    assert finetuned_acc > 0.75, finetuned_acc

    for module, name in parameters_to_prune:
        prune.remove(module, name)
    assert not prune.is_pruned(student)
    assert sorted(student.fc1.state_dict()) == ["bias", "weight"]
    assert isinstance(student.fc1.weight, nn.Parameter)
    assert abs(accuracy(student, x_test, y_test) - finetuned_acc) < 1e-9


if __name__ == "__main__":
    main()
