// A frame source that decodes the next frame of another source on a thread of its own while
// the caller works on the current one: the same frames in the same order, the same errors at
// the same call of next(), only earlier. On a 2-core CPU the mapper's serial stretches leave a
// core idle, and decoding a 640 x 480 PNG (zlib's inflate, one thread) was about a seventh of
// TUM fr1-rpy's wall time at all frames (docs/benchmarks.md, "CPU path: the serial wall of
// fr1-rpy at all frames").
#pragma once

#include <memory>

#include "vidmap/io/frame_source.h"

namespace vidmap::io {

// Wraps `source` (not null). One frame is decoded ahead, starting at once; the decoding
// thread runs its OpenMP loops on one thread. next() rethrows what the inner next() threw for
// that frame; report() waits for a decode in flight and may then cover one frame more than
// next() has yielded. Destroying the source waits for the frame in flight.
std::unique_ptr<FrameSource> prefetchFrames(std::unique_ptr<FrameSource> source);

}  // namespace vidmap::io
