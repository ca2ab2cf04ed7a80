#!/usr/bin/env bash
# Issue 34 on the lent GPU machine, in one call: build, the GPU tests of the bond kernels, the block kernel's variants
# per width class on the desk book (TRINOM_BLOCK_VARIANTS), the width-class table and the desk book per engine.
#   STAGES="tests sweep classes desk measure" bash benches/gpu_issue34.sh   (from the project root; logs under $OUT)
# CLASS_FLAGS and DESK_FLAGS pass options to width_classes.py and desk_book.py (e.g. --shared, --models 4).
set -u
source tools/device_session.sh
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
stages=" ${STAGES:-tests sweep classes desk} "
if [[ $stages == *" tests "* ]]; then
  python3 -m pytest -q -m gpu ${TESTS:-tests/test_flows_between_steps_gpu.py tests/test_wide_trees_gpu.py \
    tests/test_bonds_cuda_gpu.py} > "$OUT/tests.log" 2>&1; tail -25 "$OUT/tests.log"
fi
if [[ $stages == *" sweep "* ]]; then
  for variants in ${VARIANTS:-1,2,4,6 0,2,4,6 1,3,5,6 3,3,4,6}; do
    echo "variants $variants"
    TRINOM_BLOCK_VARIANTS=$variants python3 benches/desk_book.py --engines cuda --sizes ${SWEEP_SIZES:-14,1400} --rounds 3 \
      --out "$OUT/sweep-${variants//,/_}.json" 2>&1 | grep -v "^ trades"
  done
fi
if [[ $stages == *" classes "* ]]; then
  for variants in ${CLASS_VARIANTS:-0,3,5,6}; do
    echo "variants $variants"
    TRINOM_BLOCK_VARIANTS=$variants python3 benches/width_classes.py --engines ${CLASS_ENGINES:-cuda,multicore} \
      --classes ${CLASSES:-"<=64,65-512,513-2048,2049-8192"} --rounds 3 ${CLASS_FLAGS:-} \
      --out "$OUT/width-classes-${variants//,/_}${CLASS_FLAGS// /}.json"
  done
fi
if [[ $stages == *" desk "* ]]; then
  python3 benches/desk_book.py --engines ${DESK_ENGINES:-cuda,multicore,auto} --sizes ${DESK_SIZES:-1,14,140,1400,14000} \
    --rounds 3 --max-slow 5 ${DESK_FLAGS:-} --out "$OUT/desk${DESK_FLAGS// /}.json"
fi
