"""Per-benchmark medians of the device times stored in a results database (for the GPU notes):
e2e, GPU compute, H2D, D2H, host enqueue, and e2e minus the three device intervals (what the host
side adds per iteration: harness, synchronisation, launch gaps)."""
import sqlite3
import statistics
import sys

db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT benchmark_id, run_id, model, backend, precision, batch_size, variant FROM benchmarks "
                  "WHERE status = 'ok' ORDER BY benchmark_id").fetchall()
print("run bench model backend precision batch variant | e2e compute h2d d2h enqueue host_extra (us, medians)")
for bid, run, model, backend, precision, batch, variant in rows:
    its = db.execute("SELECT e2e_ns, compute_ns, h2d_ns, d2h_ns, enqueue_ns FROM iterations WHERE benchmark_id = ?",
                     (bid,)).fetchall()
    if not its or its[0][1] is None:
        continue
    med = lambda i: statistics.median(r[i] for r in its if r[i] is not None) / 1e3 if any(r[i] is not None for r in its) else float("nan")
    extra = statistics.median(r[0] - (r[1] or 0) - (r[2] or 0) - (r[3] or 0) for r in its) / 1e3
    print(f"{run} {bid} {model.split('/')[-1]} {backend} {precision} {batch} {variant or '-'} | "
          f"{med(0):.1f} {med(1):.1f} {med(2):.1f} {med(3):.1f} {med(4):.1f} {extra:.1f}")
