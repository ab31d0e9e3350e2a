#!/usr/bin/env python3
"""Reference ceilings measured with plain PyTorch, for `inferbench probe` to be compared with on the same GPU.

Same sizes and the same counting as inferbench's CUDA probe:
  - gemm_bf16  torch.matmul, bf16, M = N = K = --gemm-size            2 M N K FLOP per call
  - gemm_fp16  torch.matmul, fp16
  - gemm_tf32  torch.matmul, fp32 with TF32 allowed
  - gemm_int8  torch._int_mm, int8 x int8 -> int32                      2 M N K OP per call (TOPS)
  - gemm_fp8   torch._scaled_mm, e4m3 x e4m3 with fp32 scales -> bf16 (use_fast_accum=False, torch's default)
  - dram_memcpy  dst.copy_(src) device to device (a cudaMemcpyAsync) over --copy-bytes per tensor, bytes read + written
Each: one warm-up call, then --repetitions timed runs of enough calls to last ~50 ms (CUDA events), best run.

  probe_reference.py [--device 0] [--gemm-size 8192] [--copy-bytes 1073741824] [--only gemm_fp8,...] [--json OUT]
  probe_reference.py --compare INFERBENCH_PROBE.json [...]     # also prints both side by side with the ratio
  probe_reference.py --print-cublaslt                            # the libcublasLt PyTorch loads, for INFERBENCH_CUBLASLT_LIBRARY
"""
import argparse
import json
import math
import sys

import torch

TARGET_SECONDS = 0.05
# inferbench's figure must reach this share of PyTorch's (the acceptance bar).
REQUIRED_RATIO = 0.95
CHECKED = ("gemm_bf16", "gemm_int8", "gemm_fp8", "dram_memcpy")


def best_seconds_per_call(fn, repetitions):
    """Best time of one call: warm-up, calibrate the calls per timed run, then time `repetitions` runs."""
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    one = max(start.elapsed_time(end) / 1e3, 1e-6)
    calls = int(min(100, max(1, TARGET_SECONDS / one)))
    best = math.inf
    for _ in range(repetitions):
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) / 1e3 / calls)
    return best


def gemm_entries(n, device, repetitions, only):
    entries = {}
    ops = 2.0 * n * n * n
    a16 = torch.randn(n, n, device=device)
    b16 = torch.randn(n, n, device=device)

    def record(name, fn, unit, how):
        if only and name not in only:
            return
        seconds = best_seconds_per_call(fn, repetitions)
        entries[name] = {"value": ops / seconds / 1e12, "unit": unit, "seconds": seconds, "as": how}

    for name, dtype in (("gemm_bf16", torch.bfloat16), ("gemm_fp16", torch.float16)):
        a, b = a16.to(dtype), b16.to(dtype)
        c = torch.empty(n, n, device=device, dtype=dtype)
        record(name, lambda a=a, b=b, c=c: torch.matmul(a, b, out=c), "TFLOP/s", f"torch.matmul {dtype}")
        del a, b, c
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    c32 = torch.empty(n, n, device=device)
    record("gemm_tf32", lambda: torch.matmul(a16, b16, out=c32), "TFLOP/s", "torch.matmul fp32, allow_tf32")
    torch.backends.cuda.matmul.allow_tf32 = previous
    del c32

    ai = torch.randint(-64, 64, (n, n), device=device, dtype=torch.int8)
    bi = torch.randint(-64, 64, (n, n), device=device, dtype=torch.int8).t().contiguous().t()  # column-major mat2: cuBLASLt's fast TN path
    record("gemm_int8", lambda: torch._int_mm(ai, bi), "TOPS", "torch._int_mm int8 -> int32")
    del ai, bi

    if torch.cuda.get_device_capability(device) >= (8, 9):
        a8 = a16.clamp(-1, 1).to(torch.float8_e4m3fn)
        b8 = b16.clamp(-1, 1).to(torch.float8_e4m3fn).t().contiguous().t()  # _scaled_mm wants mat2 column-major
        one = torch.tensor(1.0, device=device)

        def scaled():
            out = torch._scaled_mm(a8, b8, one, one, out_dtype=torch.bfloat16)
            return out[0] if isinstance(out, tuple) else out  # older torch returned (out, amax)

        record("gemm_fp8", scaled, "TFLOP/s", "torch._scaled_mm e4m3 -> bf16, use_fast_accum=False")
    return entries


def copy_entry(copy_bytes, device, repetitions):
    src = torch.empty(copy_bytes // 4, device=device, dtype=torch.float32).normal_()
    dst = torch.empty_like(src)
    seconds = best_seconds_per_call(lambda: dst.copy_(src), repetitions)
    moved = 2.0 * src.numel() * 4  # read + written
    return {"value": moved / seconds / 1e9, "unit": "GB/s", "seconds": seconds, "as": "Tensor.copy_ device to device"}


def cublaslt_library():
    """The libcublasLt this process mapped (PyTorch loads it at its first matmul)."""
    torch.matmul(torch.ones(64, 64, device="cuda"), torch.ones(64, 64, device="cuda"))
    torch.cuda.synchronize()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "libcublasLt.so" in path:
                return path
    return ""


def compare(reference, probe_json):
    """Prints inferbench's figures beside the reference's; returns False when a checked one is below 95%."""
    with open(probe_json) as f:
        rows = json.load(f)["rows"]
    measured, skipped = {}, {}
    for row in rows:
        if row.get("device", "").startswith("cpu:"):
            continue
        if row.get("value") is None:
            skipped.setdefault(row["probe"], row.get("detail", ""))
            continue
        measured.setdefault(row["probe"], row)  # the first GPU probed
    ok = True
    print(f"{'probe':<12} {'inferbench':>14} {'PyTorch':>14} {'unit':<8} {'ratio':>7}  check")
    for name, ref in reference["results"].items():
        mine = measured.get(name)
        ratio = mine["value"] / ref["value"] if mine else float("nan")
        verdict = ""
        if name in CHECKED:
            passed = mine is not None and ratio >= REQUIRED_RATIO
            ok &= passed
            verdict = f"{'ok' if passed else 'BELOW'} (>= {REQUIRED_RATIO:.0%} of PyTorch)"
        mine_text = f"{mine['value']:14.1f}" if mine else f"{'-':>14}"
        print(f"{name:<12} {mine_text} {ref['value']:14.1f} {ref['unit']:<8} {ratio:7.3f}  {verdict}")
        if name in skipped:
            print(f"{'':<12} inferbench: {skipped[name]}")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", type=int, default=0, help="CUDA device index")
    parser.add_argument("--gemm-size", type=int, default=8192, help="M = N = K (inferbench probe --gemm-size)")
    parser.add_argument("--copy-bytes", type=int, default=1 << 30, help="bytes per tensor of the copy (--memory-size)")
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--only", help="comma-separated figures to measure (e.g. gemm_fp8); default all")
    parser.add_argument("--json", help="also write the reference figures here")
    parser.add_argument("--compare", help="inferbench probe --json output to print side by side")
    parser.add_argument("--print-cublaslt", action="store_true", help="print the libcublasLt path PyTorch uses and exit")
    args = parser.parse_args()
    if args.print_cublaslt:
        print(cublaslt_library())
        return 0
    device = torch.device("cuda", args.device)
    torch.cuda.set_device(device)
    torch.manual_seed(0)
    only = set(args.only.split(",")) if args.only else set()
    results = gemm_entries(args.gemm_size, device, args.repetitions, only)
    # Tensor.copy_ of contiguous same-type tensors is a cudaMemcpyAsync: compared with inferbench's dram_memcpy.
    if not only or "dram_memcpy" in only:
        results["dram_memcpy"] = copy_entry(args.copy_bytes, device, args.repetitions)
    reference = {"gpu": torch.cuda.get_device_name(device), "torch": torch.__version__, "cuda": torch.version.cuda,
                 "gemm_size": args.gemm_size, "copy_bytes_per_tensor": args.copy_bytes,
                 "cublaslt": cublaslt_library(), "results": results}
    text = json.dumps(reference, indent=2)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    if not args.compare:
        print(text)
        return 0
    return 0 if compare(reference, args.compare) else 1


if __name__ == "__main__":
    sys.exit(main())
