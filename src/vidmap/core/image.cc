#include "vidmap/core/image.h"

// Image is a header-only template; this unit anchors the core library.
namespace vidmap {
template class Image<float>;
template class Image<Rgb8>;
}  // namespace vidmap
