"""Reference measurements with plain PyTorch, for comparison with inferbench on the same GPU.

Writes JSON to stdout:
  - event_compute: a TorchScript ResNet-50 (saved to --script so that inferbench runs the very same
    module) timed with torch.cuda.Event around the forward pass alone, median over many iterations;
  - eager / cuda_graph: ResNet-50 fp16 batch 1 throughput, host tensors in and out, as a user would
    measure it in Python.
"""
import argparse
import json
import statistics
import time

import torch
import torchvision


def event_compute_ms(module, x, iterations=300, warmup=50):
    times = []
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.inference_mode():
        for i in range(warmup + iterations):
            start.record()
            module(x)
            end.record()
            end.synchronize()
            if i >= warmup:
                times.append(start.elapsed_time(end))
    return statistics.median(times)


def throughput(step, seconds=3.0, warmup=30):
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    count, begin = 0, time.perf_counter()
    while time.perf_counter() - begin < seconds:
        step()
        count += 1
    return count / (time.perf_counter() - begin)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--script", required=True, help="where to save the TorchScript ResNet-50")
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None).eval()
    with torch.inference_mode():
        traced = torch.jit.trace(model, torch.randn(1, 3, 224, 224))
    traced.save(args.script)

    loaded = torch.jit.load(args.script, map_location="cuda").half().eval()
    x = torch.randn(args.batch, 3, 224, 224, device="cuda").half()
    result = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0), "batch": args.batch,
              "event_compute_ms_median": event_compute_ms(loaded, x)}

    eager = model.cuda().half()
    host_in = torch.randn(1, 3, 224, 224).half().pin_memory()
    with torch.inference_mode():
        result["eager_fp16_b1_per_s"] = throughput(lambda: eager(host_in.cuda(non_blocking=True)).cpu())
        static_in = host_in.cuda()
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            for _ in range(3):
                eager(static_in)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out = eager(static_in)

        def graph_step():
            static_in.copy_(host_in, non_blocking=True)
            graph.replay()
            static_out.cpu()

        result["cuda_graph_fp16_b1_per_s"] = throughput(graph_step)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
