"""Independent NumPy implementations of the optimizers' published update rules.

Each ``step_<name>(x, g, state, t, **opts)`` updates one parameter array x in
place given its gradient g at step t (from 1); state is a dict it owns.
"""

from __future__ import annotations

import math

import numpy as np


def _wd(g, x, wd):
    return g + wd * x if wd else g


def step_sgd(
    x, g, s, t, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False
):
    g = -g if maximize else g
    g = _wd(g, x, weight_decay)
    if momentum:
        if "buf" not in s:
            s["buf"] = g.copy()
        else:
            s["buf"] = momentum * s["buf"] + (1 - dampening) * g
        g = g + momentum * s["buf"] if nesterov else s["buf"]
    x -= lr * g


def step_adam(
    x,
    g,
    s,
    t,
    lr=1e-3,
    betas=(0.9, 0.999),
    eps=1e-8,
    weight_decay=0,
    amsgrad=False,
    maximize=False,
    decoupled=False,
):
    b1, b2 = betas
    g = -g if maximize else g
    if decoupled:
        x *= 1 - lr * weight_decay
    else:
        g = _wd(g, x, weight_decay)
    s.setdefault("m", np.zeros_like(x))
    s.setdefault("v", np.zeros_like(x))
    s.setdefault("vmax", np.zeros_like(x))
    s["m"] = b1 * s["m"] + (1 - b1) * g
    s["v"] = b2 * s["v"] + (1 - b2) * g * g
    v = s["v"]
    if amsgrad:
        s["vmax"] = np.maximum(s["vmax"], v)
        v = s["vmax"]
    mhat = s["m"] / (1 - b1**t)
    vhat = v / (1 - b2**t)
    x -= lr * mhat / (np.sqrt(vhat) + eps)


def step_adamw(x, g, s, t, weight_decay=1e-2, **kw):
    step_adam(x, g, s, t, weight_decay=weight_decay, decoupled=True, **kw)


def step_adamax(x, g, s, t, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, maximize=False):
    b1, b2 = betas
    g = -g if maximize else g
    g = _wd(g, x, weight_decay)
    s.setdefault("m", np.zeros_like(x))
    s.setdefault("u", np.zeros_like(x))
    s["m"] = b1 * s["m"] + (1 - b1) * g
    s["u"] = np.maximum(b2 * s["u"], np.abs(g) + eps)
    x -= lr / (1 - b1**t) * s["m"] / s["u"]


def step_nadam(
    x,
    g,
    s,
    t,
    lr=2e-3,
    betas=(0.9, 0.999),
    eps=1e-8,
    weight_decay=0,
    momentum_decay=4e-3,
    decoupled_weight_decay=False,
    maximize=False,
):
    b1, b2 = betas
    g = -g if maximize else g
    if decoupled_weight_decay:
        x *= 1 - lr * weight_decay
    else:
        g = _wd(g, x, weight_decay)
    s.setdefault("m", np.zeros_like(x))
    s.setdefault("v", np.zeros_like(x))
    s.setdefault("prod", 1.0)
    mu = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
    mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
    s["prod"] *= mu
    s["m"] = b1 * s["m"] + (1 - b1) * g
    s["v"] = b2 * s["v"] + (1 - b2) * g * g
    vhat = s["v"] / (1 - b2**t)
    denom = np.sqrt(vhat) + eps
    x -= lr * (1 - mu) / (1 - s["prod"]) * g / denom
    x -= lr * mu_next / (1 - s["prod"] * mu_next) * s["m"] / denom


def step_radam(
    x,
    g,
    s,
    t,
    lr=1e-3,
    betas=(0.9, 0.999),
    eps=1e-8,
    weight_decay=0,
    decoupled_weight_decay=False,
    maximize=False,
):
    b1, b2 = betas
    g = -g if maximize else g
    if decoupled_weight_decay:
        x *= 1 - lr * weight_decay
    else:
        g = _wd(g, x, weight_decay)
    s.setdefault("m", np.zeros_like(x))
    s.setdefault("v", np.zeros_like(x))
    s["m"] = b1 * s["m"] + (1 - b1) * g
    s["v"] = b2 * s["v"] + (1 - b2) * g * g
    mhat = s["m"] / (1 - b1**t)
    rho_inf = 2 / (1 - b2) - 1
    rho_t = rho_inf - 2 * t * b2**t / (1 - b2**t)
    if rho_t > 5:
        r = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        adaptive = math.sqrt(1 - b2**t) / (np.sqrt(s["v"]) + eps)
        x -= lr * mhat * r * adaptive
    else:
        x -= lr * mhat


def step_rmsprop(
    x,
    g,
    s,
    t,
    lr=1e-2,
    alpha=0.99,
    eps=1e-8,
    weight_decay=0,
    momentum=0,
    centered=False,
    maximize=False,
):
    g = -g if maximize else g
    g = _wd(g, x, weight_decay)
    s.setdefault("sq", np.zeros_like(x))
    s.setdefault("ga", np.zeros_like(x))
    s.setdefault("buf", np.zeros_like(x))
    s["sq"] = alpha * s["sq"] + (1 - alpha) * g * g
    if centered:
        s["ga"] = alpha * s["ga"] + (1 - alpha) * g
        avg = np.sqrt(s["sq"] - s["ga"] ** 2) + eps
    else:
        avg = np.sqrt(s["sq"]) + eps
    if momentum > 0:
        s["buf"] = momentum * s["buf"] + g / avg
        x -= lr * s["buf"]
    else:
        x -= lr * g / avg


def step_adagrad(
    x,
    g,
    s,
    t,
    lr=1e-2,
    lr_decay=0,
    weight_decay=0,
    initial_accumulator_value=0,
    eps=1e-10,
    maximize=False,
):
    g = -g if maximize else g
    g = _wd(g, x, weight_decay)
    s.setdefault("sum", np.full_like(x, initial_accumulator_value))
    clr = lr / (1 + (t - 1) * lr_decay)
    s["sum"] = s["sum"] + g * g
    x -= clr * g / (np.sqrt(s["sum"]) + eps)


def step_adadelta(x, g, s, t, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, maximize=False):
    g = -g if maximize else g
    g = _wd(g, x, weight_decay)
    s.setdefault("sq", np.zeros_like(x))
    s.setdefault("acc", np.zeros_like(x))
    s["sq"] = rho * s["sq"] + (1 - rho) * g * g
    delta = np.sqrt(s["acc"] + eps) / np.sqrt(s["sq"] + eps) * g
    s["acc"] = rho * s["acc"] + (1 - rho) * delta * delta
    x -= lr * delta


def step_rprop(x, g, s, t, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), maximize=False):
    g = -g if maximize else g
    s.setdefault("prev", np.zeros_like(x))
    s.setdefault("size", np.full_like(x, lr))
    prod = g * s["prev"]
    factor = np.where(prod > 0, etas[1], np.where(prod < 0, etas[0], 1.0))
    s["size"] = np.clip(s["size"] * factor, step_sizes[0], step_sizes[1])
    g = np.where(prod < 0, 0.0, g)
    x -= np.sign(g) * s["size"]
    s["prev"] = g.copy()


def step_asgd(x, g, s, t, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, maximize=False):
    g = -g if maximize else g
    g = _wd(g, x, weight_decay)
    s.setdefault("eta", lr)
    s.setdefault("mu", 1.0)
    s.setdefault("ax", np.zeros_like(x))
    eta, mu = s["eta"], s["mu"]
    x *= 1 - lambd * eta
    x -= eta * g
    if mu != 1:
        s["ax"] = s["ax"] + mu * (x - s["ax"])
    else:
        s["ax"] = x.copy()
    s["eta"] = lr / (1 + lambd * lr * t) ** alpha
    s["mu"] = 1 / max(1, t - t0)
