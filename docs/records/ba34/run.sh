#!/bin/bash
# ba34 device run: ba_bench (CUDA) before (main 9352b97), mid (pair listing only, 1st call), after (+ chunked fold
# maps), Ceres and vidmap CPU via the after binary, ba_cuda_test; all on the H200 in one call.
export OUT=$(realpath $OUT); cd .xfer/ba34 && tar -xzf pack.tar.gz && export LD_LIBRARY_PATH=$PWD/lib OMP_WAIT_POLICY=passive
bzcat data/problem-93-61203-pre.txt.bz2 > p93.txt; bzcat data/problem-49-7776-pre.txt.bz2 > p49.txt
(nvidia-smi -L; nproc; date -u) > $OUT/env.txt
bin/ba_cuda_test > $OUT/cuda_test.txt 2>&1
PS="p93.txt p49.txt corridor:300x30000 synthetic:10x3000 synthetic:15x6000"
for P in $PS; do
  for v in before mid after; do
    b=bin/ba_bench_$v; [ $v = after ] && b=bin/ba_bench
    echo "== $v $P" >> $OUT/vidmap.txt
    $b --threads 16 --backends cuda --ceres none --verbose --reps ${REPS:-9} $P 2>&1 | grep -v "^ba  " >> $OUT/vidmap.txt
  done
done
for P in $PS; do
  c=dense,sparse; [ $P = corridor:300x30000 ] && c=dense
  bin/ba_bench --threads 16 --backends cpu --ceres $c $P 2>&1 | grep '^{' >> $OUT/ceres.txt
done
