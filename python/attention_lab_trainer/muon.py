"""Muon (Jordan et al. 2024, as modded-nanogpt and nanochat use it) for the hidden matrices of a run,
written here so the trainer needs nothing but torch (>= 1.13): a port of our engine's
(src/engine/optim/optimizer.ts), step for step. For each hidden matrix [rows, cols] (our parameter;
each of q, k, v in PyTorch's fused c_attn is one):

    buf <- beta*buf + (1-beta)*g ; u = (1-beta)*g + beta*buf            (Nesterov momentum)
    X = NS5(u): X <- u/(|u|_F + 1e-7), transposed when rows > cols; 5 times
        A = X X^T ; B = b*A + c*A A ; X = a*X + B X   with (a, b, c) = (3.4445, -4.7750, 2.0315)
    p <- p*(1 - lr_m*wd) ; p <- p - lr_m*max(1, rows/cols)^0.5 * X

in float32 (modded-nanogpt's runs Newton-Schulz in bf16; ours does not), with lr_m = muonLr times
the step's rate over the run's lr: the loop sets every group's "lr" to the schedule's rate, and
Muon's group carries the ratio. The momentum buffer of a tensor is kept whole (`momentum_buffer`,
like torch.optim.SGD's), so the checkpoint stores it where AdamW's first moments go.

Left out: bf16 Newton-Schulz, distributing the orthogonalisation over processes (every process
orthogonalises every matrix; DDP has averaged the gradients before), other optimizers.
"""

import torch

NS_COEFFS = (3.4445, -4.7750, 2.0315)
NS_STEPS = 5


def orthogonalize(u):
    """NS5(u) in float32: a matrix of u's shape whose singular values lie near 1 (about [0.7, 1.2])."""
    a, b, c = NS_COEFFS
    x = u.float()
    x = x / (x.norm() + 1e-7)
    tall = x.shape[0] > x.shape[1]
    if tall:
        x = x.T
    for _ in range(NS_STEPS):
        A = x @ x.T
        B = b * A + c * (A @ A)
        x = a * x + B @ x
    return x.T if tall else x


class Muon(torch.optim.Optimizer):
    """Muon over `params`, each with its hidden matrices as row ranges: views[p] = [(start, end), ...]
    (None: the whole tensor is one matrix). `ratio` = muonLr / the run's lr, so the group's "lr" is the
    schedule's rate, as AdamW's is."""

    def __init__(self, params, views, lr, ratio, momentum, weight_decay):
        params = list(params)
        super().__init__(params, {"lr": lr, "ratio": ratio, "momentum": momentum, "weight_decay": weight_decay})
        self.views = views

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            beta, wd = group["momentum"], group["weight_decay"]
            lr = group["lr"] * group["ratio"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad
                st = self.state[p]
                if "momentum_buffer" not in st:
                    st["momentum_buffer"] = torch.zeros_like(p)
                buf = st["momentum_buffer"]
                buf.mul_(beta).add_(g, alpha=1 - beta)
                u = (1 - beta) * g + beta * buf
                for start, end in self.views[p] or [(0, p.shape[0])]:
                    x = orthogonalize(u[start:end])
                    rows, cols = x.shape
                    view = p[start:end]
                    if wd > 0:
                        view.mul_(1 - lr * wd)
                    view.add_(x.to(view.dtype), alpha=-lr * max(1.0, rows / cols) ** 0.5)


class MuonAdamW:
    """Muon for the hidden matrices and AdamW for the rest, stepped together: what the trainer's loop
    calls an optimizer (param_groups to set the rate in, step, zero_grad)."""

    def __init__(self, adamw, muon):
        self.adamw, self.muon = adamw, muon

    @property
    def param_groups(self):
        return self.adamw.param_groups + self.muon.param_groups

    def step(self):
        self.adamw.step()
        self.muon.step()

    def zero_grad(self, set_to_none=True):
        self.adamw.zero_grad(set_to_none=set_to_none)
        self.muon.zero_grad(set_to_none=set_to_none)


def build_muon_adamw(o, params, hidden_rows):
    """The optimizer of our config `o` (type muon) over `params` (model tensors, in order);
    hidden_rows[p]: p's hidden matrices as row ranges, absent for a tensor AdamW updates (decayed when
    of dim >= 2, as our engine marks it)."""
    rest = [p for p in params if p not in hidden_rows]
    groups = [
        {"params": [p for p in rest if p.dim() >= 2], "weight_decay": o["weightDecay"]},
        {"params": [p for p in rest if p.dim() < 2], "weight_decay": 0.0},
    ]
    adamw = torch.optim.AdamW(
        [g for g in groups if g["params"]], lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"]
    )
    muon_params = [p for p in params if p in hidden_rows]
    muon = Muon(
        muon_params if muon_params else [torch.zeros(0, requires_grad=True)],
        hidden_rows,
        lr=o["lr"],
        ratio=o["muonLr"] / o["lr"],
        momentum=o["muonMomentum"],
        weight_decay=o["weightDecay"],
    )
    return MuonAdamW(adamw, muon)
