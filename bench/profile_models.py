#!/usr/bin/python3
"""The callgrind profile of bench/README.md ("Whole models: where the time goes"): one-layer checkpoints of GPT-2
small's and SmolLM-135M's shapes (tools/references/make_bench_models.py's init) in build/bench-models-profile/, the native
bench/native/pretrained_profile under `valgrind --tool=callgrind` at 128 tokens (full vocabulary) and 512 (a
1024-token vocabulary), then the table per full network: per-layer costs times the layer count, GEMMs split by
multiply-adds, the head scaled from the full-vocabulary run. Instruction counts do not depend on machine load.

    cmake --preset native && cmake --build build/native --target attnscope_pretrained_profile
    /usr/bin/python3 bench/profile_models.py [--label after] [--binary build/native/bench/pretrained_profile]
"""
import argparse
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
NETS = {"GPT-2": dict(L=12, d=768, q=768, kv=768, I=3072, mlp=2, V=50257),
        "SmolLM": dict(L=30, d=576, q=576, kv=192, I=1536, mlp=3, V=49152)}


def make_checkpoints(out):
    import torch
    from attnscope_tools import safetensors_file
    from references import make_bench_models as m
    base = {"GPT-2": (m.GPT2_SMALL, m.hf_init_gpt2, "n_layer"), "SmolLM": (m.SMOLLM_135M, m.hf_init_llama, "num_hidden_layers")}
    for net, (config, init, layers) in base.items():
        for vocab in (None, 1024):
            c = dict(config, **{layers: 1}, **({"vocab_size": vocab} if vocab else {}))
            d = os.path.join(out, f"{net}-{vocab or 'full'}")
            if os.path.exists(os.path.join(d, "model.safetensors")):
                continue
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "config.json"), "w") as f:
                json.dump(c, f)
            safetensors_file.save_file(init(c, torch.Generator().manual_seed(5)), os.path.join(d, "model.safetensors"), {"format": "pt"})


def costs(path, inclusive):
    out = subprocess.run(["callgrind_annotate", "--threshold=100", f"--inclusive={'yes' if inclusive else 'no'}", path],
                         capture_output=True, text=True, check=True).stdout
    rows = [re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)", line) for line in out.splitlines()]
    return {m.group(2): int(m.group(1).replace(",", "")) for m in rows if m}


def find(table, pattern):
    return sum(v for k, v in table.items() if re.search(pattern, k))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "native", "bench", "pretrained_profile"))
    ap.add_argument("--label", default="this build")
    args = ap.parse_args()
    folder = os.path.join(ROOT, "build", "bench-models-profile")
    make_checkpoints(folder)
    runs = [(net, T, os.path.join(folder, f"{net}-{'full' if T == 128 else 1024}")) for net in NETS for T in (128, 512)]

    def profile(run):
        net, T, d = run
        out = os.path.join(folder, f"{net}-{T}.callgrind")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", args.binary, d, str(T), "1"],
                       check=True, capture_output=True)
        return out
    with ThreadPoolExecutor(len(runs)) as pool:
        outputs = list(pool.map(profile, runs))
    print("| code | network | T | total | GEMM q/k/v/o | GEMM MLP | LM head | attention | norms | MLP activation | copies, zeroing, embeddings, RoPE, rest |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (net, T, _), out in zip(runs, outputs):
        c, inc, exc = NETS[net], costs(out, True), costs(out, False)
        forward = find(inc, r"PretrainedModel::forward\(")
        gemm = find(inc, r"TaskBody::TaskBody<attnscope::detail::matmul_packed")
        attention = find(inc, r"attnscope::detail::attend_rows\(") + find(inc, r"pack_keys_and_values")
        norms, act = find(exc, r"norm_rows"), find(exc, r"activate\(|silu_mul")
        zeroing = find(inc, r"attnscope::Tensor::Tensor\(std::vector<unsigned long")  # the outputs, once a pass
        rest = forward - gemm - attention - norms - act - zeroing
        mac_attn = T * c["d"] * (c["q"] + 2 * c["kv"]) + T * c["q"] * c["d"]
        mac_mlp = T * c["d"] * c["I"] * c["mlp"]
        per_mac = gemm / (mac_attn + mac_mlp + T * (c["V"] if T == 128 else 1024) * c["d"])
        L = c["L"]
        parts = [L * per_mac * mac_attn, L * per_mac * mac_mlp, per_mac * T * c["V"] * c["d"], L * attention, L * norms,
                 L * act, L * rest + zeroing]
        total = sum(parts)
        print(f"| {args.label} | {net} | {T} | {total / 1e9:.1f} | " + " | ".join(f"{p / 1e9:.2f} ({100 * p / total:.1f} %)" for p in parts) + " |")


if __name__ == "__main__":
    main()
