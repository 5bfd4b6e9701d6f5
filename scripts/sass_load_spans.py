"""For each full-array kernel in a cubin: how far apart ptxas puts the UNROLL = 4 16-byte loads
of a tile (instructions spanned by the tightest four; 3 means issued back to back). Under the
32-register cap of __launch_bounds__(256, 8), some instantiations issue them two and two, which
halves the bytes a thread has in flight (docs/performance.md). No GPU needed.

usage: nvcc -std=c++17 -O3 -arch=sm_90 -Iinclude -Isrc -Isrc/dispatch -cubin -o sum.cubin \
         build/generated/launch_full_sum.cu   (a file CMake generates per op)
       python3 scripts/sass_load_spans.py sum.cubin
cuobjdump and nvdisasm must be on PATH; without the toolkit's, `pip download --no-deps
nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm` and unpack the wheels (nvidia/cu13/bin/)."""
import re
import subprocess
import sys

DTYPES = ["f32", "f64", "f16", "bf16", "e4m3", "e5m2", "i8", "i32", "i64"]  # cureduce_dtype order
OPS = ["sum", "min", "max", "absmax", "sumsq", "argmin", "argmax", "mean"]  # cureduce_op order

if len(sys.argv) != 2:
    sys.exit(__doc__)
try:
    sass = subprocess.run(["cuobjdump", "-sass", sys.argv[1]], capture_output=True, text=True, check=True).stdout
except FileNotFoundError:
    sys.exit("sass_load_spans.py: cuobjdump is not on PATH (see the usage at the top of this file)")
except subprocess.CalledProcessError as e:
    sys.exit(f"sass_load_spans.py: cuobjdump failed on {sys.argv[1]}: {e.stderr.strip()}")
for body in re.split(r"\n\s*Function : ", sass)[1:]:
    name = body.split("\n", 1)[0]
    m = re.search(r"reduce_full_single_passIL14cureduce_dtype(\d+)ELS1_(\d+)EL11cureduce_op(\d+)", name)
    if not m:
        continue
    ins = [l for l in body.split("\n") if re.search(r"/\*[0-9a-f]{4}\*/", l)]
    loads = [i for i, l in enumerate(ins) if "LDG.E.128" in l]
    span = min((loads[k + 3] - loads[k] for k in range(len(loads) - 3)), default=None)
    dt, acc, op = (int(g) for g in m.groups())
    print(f"{DTYPES[dt]:>5} -> {DTYPES[acc]:<4} {OPS[op]:<7} tightest four loads within {span} instructions")
