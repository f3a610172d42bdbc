#!/usr/bin/python3
"""Trains ork's embedded default model: a small Llama on the quotations of Debian's fortunes
packages, with a byte-level BPE tokenizer learned from the same text, and exports it as GGUF.

Deterministic: the corpus split, the tokenizer and the training (fixed seeds, deterministic
algorithms, a fixed thread count) depend only on the arguments and the corpus files. See
tools/train_tiny/README.md for the exact command, the corpus and its licence.

Writes, in --out-dir: NAME.gguf (the model, --type), heldout.txt (the held-out split) and
heldout.tokens (the held-out split's token ids as this tokenizer gives them, without BOS, space
separated: tests compare ork's tokenizer with it); in --variants-dir (when given): NAME-f32.gguf,
NAME-f16.gguf and NAME-q8_0.gguf, for measuring what quantization costs.
"""
import argparse
import math
import os
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # spinning OpenMP threads crawl on a busy machine

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpe  # noqa: E402
import corpus  # noqa: E402
import gguf_writer  # noqa: E402
import model as llama  # noqa: E402

BOS, EOS = "<|begin_of_text|>", "<|end_of_text|>"
TYPES = {"f32": gguf_writer.GGML_F32, "f16": gguf_writer.GGML_F16, "q8_0": gguf_writer.GGML_Q8_0}
FILE_TYPES = {"f32": 0, "f16": 1, "q8_0": 7}  # llama_ftype: ALL_F32, MOSTLY_F16, MOSTLY_Q8_0


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpus-dir", default="/usr/share/games/fortunes")
    p.add_argument("--out-dir", default="models")
    p.add_argument("--variants-dir", default="", help="also write f32/f16/q8_0 files here")
    p.add_argument("--name", default="tiny-fortunes")
    p.add_argument("--type", default="f16", choices=sorted(TYPES))
    p.add_argument("--vocab", type=int, default=1024, help="tokens in all (256 bytes + merges + 2)")
    p.add_argument("--n-embd", type=int, default=192)
    p.add_argument("--n-layer", type=int, default=4)
    p.add_argument("--n-head", type=int, default=6)
    p.add_argument("--n-head-kv", type=int, default=6)
    p.add_argument("--n-ff", type=int, default=512)
    p.add_argument("--ctx", type=int, default=256, help="training sequence length = context_length")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--threads", type=int, default=2)
    return p.parse_args()


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def heldout_ppl(m, ids, bos, n_ctx):
    """Perplexity as `ork perplexity` and llama.cpp's perplexity compute it: tokens = [BOS] + ids,
    n_chunk = len // n_ctx non-overlapping windows, each window's first token replaced by BOS, the
    logits at positions n_ctx/2 .. n_ctx-2 scored against the next token."""
    toks = [bos] + ids
    n_chunk = len(toks) // n_ctx
    first = n_ctx // 2
    nll, count = 0.0, 0
    m.eval()
    with torch.no_grad():
        for i in range(n_chunk):
            w = list(toks[i * n_ctx:(i + 1) * n_ctx])
            w[0] = bos
            x = torch.tensor([w])
            logp = F.log_softmax(m(x)[0].double(), dim=-1)
            tgt = torch.tensor(w[first + 1:])
            nll -= logp[first:n_ctx - 1].gather(1, tgt[:, None]).sum().item()
            count += n_ctx - 1 - first
    m.train()
    return math.exp(nll / count), count


def export(m, c, tok, args, path, type_name):
    w = gguf_writer.Writer()
    a = "llama."
    w.string("general.architecture", "llama")
    w.string("general.name", args.name)
    w.string("general.description", "Trained on the fortunes of Debian's fortunes packages by "
             "tools/train_tiny/train_tiny.py (ork)")
    w.u32("general.file_type", FILE_TYPES[type_name])
    w.u32("general.quantization_version", 2)
    w.u32(a + "context_length", c.n_ctx)
    w.u32(a + "embedding_length", c.n_embd)
    w.u32(a + "block_count", c.n_layer)
    w.u32(a + "feed_forward_length", c.n_ff)
    w.u32(a + "attention.head_count", c.n_head)
    w.u32(a + "attention.head_count_kv", c.n_head_kv)
    w.u32(a + "rope.dimension_count", c.head_dim)
    w.f32(a + "rope.freq_base", c.rope_base)
    w.f32(a + "attention.layer_norm_rms_epsilon", c.rms_eps)
    w.u32(a + "vocab_size", c.n_vocab)
    w.string("tokenizer.ggml.model", "gpt2")
    w.string("tokenizer.ggml.pre", "llama-bpe")
    w.strings("tokenizer.ggml.tokens", tok.tokens)
    w.i32s("tokenizer.ggml.token_type", [1] * (len(tok.tokens) - 2) + [3, 3])
    w.strings("tokenizer.ggml.merges", [f"{l} {r}" for l, r in tok.merges])
    w.u32("tokenizer.ggml.bos_token_id", tok.id[BOS])
    w.u32("tokenizer.ggml.eos_token_id", tok.id[EOS])
    w.boolean("tokenizer.ggml.add_bos_token", True)
    w.boolean("tokenizer.ggml.add_eos_token", False)
    for name, arr, is_norm in m.gguf_tensors():
        w.tensor(name, arr, gguf_writer.GGML_F32 if is_norm else TYPES[type_name])
    w.write(path)
    log(f"wrote {path} ({os.path.getsize(path)} bytes)")


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(args.threads)
    t_start = time.time()

    train_text, held_text = corpus.split(corpus.read_entries(args.corpus_dir))
    log(f"corpus: {len(train_text)} chars train, {len(held_text)} chars held out")
    merges = bpe.train(train_text, args.vocab - 256 - 2)
    tok = bpe.Tokenizer(merges, [BOS, EOS])
    if len(tok.tokens) != args.vocab:
        sys.exit(f"train_tiny: the corpus gave only {len(tok.tokens)} tokens (--vocab {args.vocab})")
    train_ids = np.array(tok.encode(train_text), dtype=np.int64)
    held_ids = tok.encode(held_text)
    log(f"tokenizer: {len(tok.tokens)} tokens, {len(merges)} merges; {len(train_ids)} train tokens, "
        f"{len(held_ids)} held-out tokens")

    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, "heldout.txt"), "w", encoding="utf-8", newline="") as f:
        f.write(held_text)
    with open(os.path.join(args.out_dir, "heldout.tokens"), "w") as f:
        f.write(" ".join(map(str, held_ids)) + "\n")

    c = llama.Config(args.vocab, args.n_embd, args.n_layer, args.n_head, args.n_head_kv, args.n_ff,
                     args.ctx)
    m = llama.Llama(c)
    log(f"model: {sum(p.numel() for p in m.parameters())} parameters")
    decay = [p for p in m.parameters() if p.dim() == 2]
    no_decay = [p for p in m.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95))
    gen = torch.Generator().manual_seed(args.seed)
    stream = torch.from_numpy(train_ids)
    bos = tok.id[BOS]
    T = args.ctx
    for step in range(args.steps):
        # Linear warmup, then cosine decay to 10% of the peak.
        if step < args.warmup:
            lr = args.lr * (step + 1) / args.warmup
        else:
            t = (step - args.warmup) / max(1, args.steps - args.warmup)
            lr = args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))
        for g in opt.param_groups:
            g["lr"] = lr
        starts = torch.randint(0, len(stream) - T, (args.batch,), generator=gen)
        y = torch.stack([stream[s:s + T] for s in starts.tolist()])
        x = torch.cat([torch.full((args.batch, 1), bos), y[:, :-1]], dim=1)
        loss = F.cross_entropy(m(x).reshape(-1, c.n_vocab), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        if step % 50 == 0 or step == args.steps - 1:
            log(f"step {step}/{args.steps} loss {loss.item():.4f} lr {lr:.2e} "
                f"({time.time() - t_start:.0f} s)")

    ppl, count = heldout_ppl(m, held_ids, bos, T)
    log(f"held-out perplexity (F32, PyTorch, ctx {T}): {ppl:.4f} over {count} tokens")
    export(m, c, tok, args, os.path.join(args.out_dir, args.name + ".gguf"), args.type)
    if args.variants_dir:
        os.makedirs(args.variants_dir, exist_ok=True)
        for t in ("f32", "f16", "q8_0"):
            export(m, c, tok, args, os.path.join(args.variants_dir, f"{args.name}-{t}.gguf"), t)
    log(f"done in {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
