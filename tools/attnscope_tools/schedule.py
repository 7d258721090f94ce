"""The learning-rate schedule and the optimiser step of both training scripts."""

import math


def lr_at(step, total, base, warmup, min_frac):
    """Learning rate of both training scripts: linear warm-up, then cosine decay to min_frac·base."""
    if step < warmup:
        return base * (step + 1) / warmup
    p = (step - warmup) / max(1, total - warmup)
    return base * (min_frac + (1 - min_frac) * 0.5 * (1 + math.cos(math.pi * p)))


def set_lr(opt, step, train):
    """Give every parameter group the learning rate of `step` under `train` (steps, lr, warmup, min_lr_frac);
    returns it."""
    lr = lr_at(step, train["steps"], train["lr"], train["warmup"], train["min_lr_frac"])
    for g in opt.param_groups:
        g["lr"] = lr
    return lr


def optimizer_step(opt, model, loss, grad_clip):
    """Back-propagate `loss`, clip the gradients' global norm to grad_clip, and step."""
    import torch  # only the training scripts call this
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    opt.step()
