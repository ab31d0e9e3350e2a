# Sourced by the GPU scripts that run the bundle (scripts/bundle.sh's dist/): the library path the bundle and
# ONNX Runtime's CUDA provider need, with CUDA 13 and cuDNN 9 from the machine or from every lib/ folder of
# pip's nvidia-* wheels (nvidia-cuda-runtime, nvidia-cublas, nvidia-cudnn-cu13, ...: PyTorch's), and the
# model cache; first a library sent in parts (dist/lib/NAME.part-aa, -ab, ...: `split -b 40M`) is joined. Needs
# $dist set.
for first in "$dist"/lib/*.part-aa; do
  [ -e "$first" ] || continue
  whole=${first%.part-aa}
  cat "$whole".part-* > "$whole" && rm -f "$whole".part-*
done
nvidia_dirs=$(python3 - <<'PY' 2>/dev/null || true
import glob, os, site
roots = site.getsitepackages() + [site.getusersitepackages()]
dirs = sorted({os.path.dirname(p) for r in roots for p in glob.glob(os.path.join(r, "nvidia", "**", "lib*.so*"), recursive=True)})
print(":".join(dirs))
PY
)
export LD_LIBRARY_PATH="$dist/lib${nvidia_dirs:+:$nvidia_dirs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/inferbench-cache}
