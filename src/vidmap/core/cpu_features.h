// The CPU's instruction sets, for the CPU backends' copies compiled for them
// (target("avx2")): such a copy is called only where the CPU runs it.
#pragma once

namespace vidmap {

// Whether this CPU has AVX2 (always false off x86-64 GCC or Clang).
inline bool cpuHasAvx2() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
#else
  return false;
#endif
}

}  // namespace vidmap
