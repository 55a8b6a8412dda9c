# Reconstruct a video and read the camera poses and the points into numpy.
#   python3 reconstruct_video.py VIDEO OUTDIR
import sys

import numpy as np
import vidmap

video, outdir = sys.argv[1], sys.argv[2]
maps = vidmap.reconstruct(video, outdir, fps=4)  # {0: Reconstruction, ...}; options as keywords
rec = maps[0]
print(rec.summary())

images = sorted(rec.images.values(), key=lambda im: im.name)  # frame order
R = np.stack([im.cam_from_world.rotation.matrix() for im in images])  # (N, 3, 3) world to camera
t = np.stack([im.cam_from_world.translation for im in images])  # (N, 3)
centres = -np.einsum("nji,nj->ni", R, t)  # camera centres in the world, (N, 3)
xyz = rec.points3D_xyz()  # (M, 3)
camera = rec.cameras[images[0].camera_id]
print(camera.model, camera.params)  # COLMAP's model and parameters (pixels at native size)
print(f"{len(images)} poses, {len(xyz)} points, path length "
      f"{np.linalg.norm(np.diff(centres, axis=0), axis=1).sum():.3f}")
print("timings (ms):", {k: round(v["wall_ms"]) for k, v in maps.record["stages"].items()})
