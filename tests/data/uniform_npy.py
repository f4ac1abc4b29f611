"""Writes 6 .npy batches of uniform [-1, 1) float32 of a shape into a folder (the realistic
export set's calibration data: tests/test_real_exports.sh, bench/search_table.sh).
usage: uniform_npy.py DIR D0,D1,... SEED"""
import os
import sys

import numpy as np

d, shape, seed = sys.argv[1], tuple(int(x) for x in sys.argv[2].split(',')), int(sys.argv[3])
os.makedirs(d, exist_ok=True)
rng = np.random.default_rng(seed)
for i in range(6):
    np.save(os.path.join(d, "b%d.npy" % i), rng.uniform(-1, 1, shape).astype(np.float32))
