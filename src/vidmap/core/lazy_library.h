// A shared library opened on first use (dlopen), for the optional heavy dependencies a run may
// never touch (cuBLAS, cuSOLVER, FFmpeg): linked normally, the dynamic loader maps them, their
// dependencies and their static initialisers at every start of every binary, `vidmap --help`
// included (docs/benchmarks.md, "Start-up cost"). A stub file defines each function the
// project calls with its header's signature and forwards it with VIDMAP_LAZY_FORWARD: the
// library is opened at the first call, by its soname (LD_LIBRARY_PATH, the loader's cache),
// then at the path CMake found at build time. A missing library or symbol is a vidmap::Error
// naming it. This is the stub pattern of TensorFlow's and PyTorch's CUDA library loaders.
#pragma once

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "vidmap/core/error.h"

namespace vidmap {

class LazyLibrary {
 public:
  // `what`: who needs the library, for the message when it is missing.
  LazyLibrary(const char* soname, const char* path, const char* what)
      : soname_(soname), path_(path), what_(what) {}

  // The address of `name` in the library, opening it on the first call.
  void* symbol(const char* name) {
    std::call_once(once_, [this] {
      for (const char* file : {soname_, path_}) {
        handle_ = dlopen(file, RTLD_NOW | RTLD_LOCAL);
        if (handle_) return;
        if (error_.empty()) error_ = dlerror();
      }
    });
    if (!handle_)
      throw Error(std::string("cannot load ") + soname_ + " (needed by " + what_ + "): " + error_);
    void* f = dlsym(handle_, name);
    if (!f) throw Error(std::string("no ") + name + " in " + soname_);
    return f;
  }

 private:
  const char* soname_;
  const char* path_;
  const char* what_;
  std::once_flag once_;
  void* handle_ = nullptr;
  std::string error_;
};

}  // namespace vidmap

// In a stub `RET name(PARAMS) { VIDMAP_LAZY_FORWARD(library, name, ARGS...); }`: calls the real
// `name` of `library` (a LazyLibrary), resolved once.
#define VIDMAP_LAZY_FORWARD(library, name, ...)                                        \
  static const auto real = reinterpret_cast<decltype(&name)>((library).symbol(#name)); \
  return real(__VA_ARGS__)
