// Turns the run-time camera model and rotation type into compile-time tags, so that the
// per-observation code is instantiated once per combination (5 models x 2 rotations).
#pragma once

#include <string>
#include <type_traits>

#include "vidmap/ba/types.h"
#include "vidmap/core/error.h"

namespace vidmap::ba {

template <CameraModel M>
using ModelTag = std::integral_constant<CameraModel, M>;
template <RotationType R>
using RotationTag = std::integral_constant<RotationType, R>;

template <class F>
void dispatchRotation(RotationType r, F&& f) {
  if (r == RotationType::kQuaternion)
    f(RotationTag<RotationType::kQuaternion>{});
  else
    f(RotationTag<RotationType::kAngleAxis>{});
}

// Calls f(ModelTag<M>{}, RotationTag<R>{}).
template <class F>
void dispatchModel(CameraModel m, RotationType r, F&& f) {
  dispatchRotation(r, [&](auto rt) {
    switch (m) {
      case CameraModel::kSimplePinhole:
        f(ModelTag<CameraModel::kSimplePinhole>{}, rt);
        break;
      case CameraModel::kPinhole:
        f(ModelTag<CameraModel::kPinhole>{}, rt);
        break;
      case CameraModel::kSimpleRadial:
        f(ModelTag<CameraModel::kSimpleRadial>{}, rt);
        break;
      case CameraModel::kRadial:
        f(ModelTag<CameraModel::kRadial>{}, rt);
        break;
      case CameraModel::kBal:
        f(ModelTag<CameraModel::kBal>{}, rt);
        break;
      case CameraModel::kOpenCV:
      case CameraModel::kFullOpenCV:
        throw Error(std::string("bundle adjustment: camera model ") + modelName(m) +
                    " is not refined");
    }
  });
}

}  // namespace vidmap::ba
