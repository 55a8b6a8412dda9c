# Convert a model to nerfstudio's transforms.json (NeRF, Gaussian splatting).
#   python3 export_nerfstudio.py OUTDIR/sparse/0 DATADIR
# (the same as `vidmap export --format nerfstudio OUTDIR/sparse/0 -o DATADIR/transforms.json`)
import json
import sys
from pathlib import Path

import vidmap

model, datadir = sys.argv[1], Path(sys.argv[2])
datadir.mkdir(parents=True, exist_ok=True)
rec = vidmap.Reconstruction(model)
vidmap.export_nerfstudio(rec, datadir / "transforms.json", image_dir="images")
frames = json.loads((datadir / "transforms.json").read_text())["frames"]
print(f"{len(frames)} frames; put the images in {datadir / 'images'}, then "
      f"ns-train splatfacto --data {datadir}")
