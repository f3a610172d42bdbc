"""The Llama model exactly as ork's llama forward pass computes it (src/model/forward.cpp):
RMSNorm x * w / sqrt(mean(x^2) + eps); Q/K/V without bias; RoPE on the pairs (2i, 2i+1) of each
head ("normal" mode, ops/rope.h) with theta_i = pos * base^(-2i / head_dim); causal softmax
attention scaled by 1/sqrt(head_dim), n_head_kv heads shared by groups of query heads; SwiGLU
feed-forward down(silu(gate(x)) * up(x)); a final RMSNorm and an output head tied to the token
embedding (the GGUF file has no output.weight). Weights are trained in this convention, so they are
exported as they are (no q/k permutation as in HF conversions)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Config:
    def __init__(self, n_vocab, n_embd, n_layer, n_head, n_head_kv, n_ff, n_ctx, rms_eps=1e-5,
                 rope_base=10000.0):
        self.n_vocab, self.n_embd, self.n_layer = n_vocab, n_embd, n_layer
        self.n_head, self.n_head_kv, self.n_ff, self.n_ctx = n_head, n_head_kv, n_ff, n_ctx
        self.rms_eps, self.rope_base = rms_eps, rope_base
        self.head_dim = n_embd // n_head


class RMSNorm(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(head_dim, n_ctx, base):
    inv = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    ang = torch.arange(n_ctx, dtype=torch.float64)[:, None] * inv[None, :]  # [T, head_dim/2]
    return torch.cos(ang).float(), torch.sin(ang).float()


def apply_rope(x, cos, sin):
    """x: [B, H, T, D]; rotates the pairs (2i, 2i+1)."""
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        hd = c.head_dim
        self.attn_norm = RMSNorm(c.n_embd, c.rms_eps)
        self.wq = nn.Linear(c.n_embd, c.n_head * hd, bias=False)
        self.wk = nn.Linear(c.n_embd, c.n_head_kv * hd, bias=False)
        self.wv = nn.Linear(c.n_embd, c.n_head_kv * hd, bias=False)
        self.wo = nn.Linear(c.n_head * hd, c.n_embd, bias=False)
        self.ffn_norm = RMSNorm(c.n_embd, c.rms_eps)
        self.gate = nn.Linear(c.n_embd, c.n_ff, bias=False)
        self.up = nn.Linear(c.n_embd, c.n_ff, bias=False)
        self.down = nn.Linear(c.n_ff, c.n_embd, bias=False)

    def forward(self, x, cos, sin, mask):
        c, (B, T, _) = self.c, x.shape
        hd = c.head_dim
        h = self.attn_norm(x)
        q = self.wq(h).view(B, T, c.n_head, hd).transpose(1, 2)
        k = self.wk(h).view(B, T, c.n_head_kv, hd).transpose(1, 2)
        v = self.wv(h).view(B, T, c.n_head_kv, hd).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        g = c.n_head // c.n_head_kv
        if g > 1:
            k, v = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
        s = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd)) + mask
        a = (F.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(B, T, c.n_head * hd)
        x = x + self.wo(a)
        h = self.ffn_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Llama(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.tok_embd = nn.Embedding(c.n_vocab, c.n_embd)
        self.blocks = nn.ModuleList(Block(c) for _ in range(c.n_layer))
        self.output_norm = RMSNorm(c.n_embd, c.rms_eps)
        cos, sin = rope_tables(c.head_dim, c.n_ctx, c.rope_base)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        self.reset_parameters()

    def reset_parameters(self):
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02
                if name.endswith("wo.weight") or name.endswith("down.weight"):
                    std = 0.02 / math.sqrt(2 * self.c.n_layer)
                nn.init.normal_(p, 0.0, std)

    def forward(self, tokens):
        """tokens: [B, T] (T <= n_ctx) → logits [B, T, n_vocab]."""
        T = tokens.shape[1]
        mask = torch.full((T, T), float("-inf")).triu(1)
        x = self.tok_embd(tokens)
        cos, sin = self.cos[:T], self.sin[:T]
        for blk in self.blocks:
            x = blk(x, cos, sin, mask)
        return self.output_norm(x) @ self.tok_embd.weight.t()

    def gguf_tensors(self):
        """(name, float32 numpy array in row-major [rows][cols], is_norm) in llama.cpp's naming."""
        out = [("token_embd.weight", self.tok_embd.weight, False)]
        for i, b in enumerate(self.blocks):
            p = f"blk.{i}."
            out += [(p + "attn_norm.weight", b.attn_norm.weight, True),
                    (p + "attn_q.weight", b.wq.weight, False),
                    (p + "attn_k.weight", b.wk.weight, False),
                    (p + "attn_v.weight", b.wv.weight, False),
                    (p + "attn_output.weight", b.wo.weight, False),
                    (p + "ffn_norm.weight", b.ffn_norm.weight, True),
                    (p + "ffn_gate.weight", b.gate.weight, False),
                    (p + "ffn_up.weight", b.up.weight, False),
                    (p + "ffn_down.weight", b.down.weight, False)]
        out.append(("output_norm.weight", self.output_norm.weight, True))
        return [(n, t.detach().float().cpu().numpy(), norm) for n, t, norm in out]
