#include "vidmap/geometry/sturm.h"

#include <algorithm>
#include <cmath>

namespace vidmap::geometry {
namespace {

constexpr int kMaxDegree = 16;

struct Chain {
  // chain[k] has degree deg[k]; coefficients ascending.
  double p[kMaxDegree + 1][kMaxDegree + 1];
  int deg[kMaxDegree + 1];
  int len = 0;
};

double evaluate(const double* c, int n, double x) {
  double v = c[n];
  for (int i = n - 1; i >= 0; --i) v = v * x + c[i];
  return v;
}

int signChanges(const Chain& ch, double x) {
  int changes = 0;
  double prev = 0;
  for (int k = 0; k < ch.len; ++k) {
    const double v = evaluate(ch.p[k], ch.deg[k], x);
    if (v == 0) continue;
    if (prev != 0 && (v > 0) != (prev > 0)) ++changes;
    prev = v;
  }
  return changes;
}

// Polishes the single root of p in (a, b), where p(a) and p(b) differ in sign.
double polishRoot(const double* c, const double* dc, int n, double a, double b) {
  double fa = evaluate(c, n, a);
  double x = 0.5 * (a + b);
  for (int it = 0; it < 100; ++it) {
    const double f = evaluate(c, n, x);
    if (f == 0) return x;
    if ((f > 0) == (fa > 0)) {
      a = x;
      fa = f;
    } else {
      b = x;
    }
    const double df = evaluate(dc, n - 1, x);
    double nx = df != 0 ? x - f / df : 0.5 * (a + b);
    if (!(nx > a && nx < b)) nx = 0.5 * (a + b);  // Newton left the bracket: bisect
    if (std::abs(nx - x) <= 1e-15 * std::max(1.0, std::abs(x))) return nx;
    x = nx;
  }
  return x;
}

}  // namespace

int sturmRealRoots(const double* cin, int n, double* roots) {
  // Drop vanishing leading coefficients.
  double scale = 0;
  for (int i = 0; i <= n; ++i) scale = std::max(scale, std::abs(cin[i]));
  if (!(scale > 0) || !std::isfinite(scale)) return 0;
  while (n > 0 && std::abs(cin[n]) <= 1e-14 * scale) --n;
  if (n <= 0) return 0;
  Chain ch;
  for (int i = 0; i <= n; ++i) ch.p[0][i] = cin[i] / cin[n];
  ch.deg[0] = n;
  for (int i = 1; i <= n; ++i) ch.p[1][i - 1] = i * ch.p[0][i];
  ch.deg[1] = n - 1;
  ch.len = 2;
  // p_{k+1} = -rem(p_{k-1}, p_k)
  while (ch.deg[ch.len - 1] > 0) {
    const int k = ch.len;
    double r[kMaxDegree + 1];
    const int da = ch.deg[k - 2], db = ch.deg[k - 1];
    std::copy(ch.p[k - 2], ch.p[k - 2] + da + 1, r);
    const double* b = ch.p[k - 1];
    for (int i = da; i >= db; --i) {
      const double q = r[i] / b[db];
      for (int j = 0; j <= db; ++j) r[i - db + j] -= q * b[j];
    }
    int dr = db - 1;
    double rs = 0;
    for (int i = 0; i <= da; ++i) rs = std::max(rs, std::abs(ch.p[k - 2][i]));
    while (dr >= 0 && std::abs(r[dr]) <= 1e-15 * rs) --dr;
    if (dr < 0) break;  // p_{k-1} divides p_{k-2}: a multiple root; the chain ends here
    for (int i = 0; i <= dr; ++i) ch.p[k][i] = -r[i];
    ch.deg[k] = dr;
    ch.len = k + 1;
  }
  // Cauchy's bound on the roots of the monic p.
  double bound = 0;
  for (int i = 0; i < n; ++i) bound = std::max(bound, std::abs(ch.p[0][i]));
  bound = 1 + bound;
  // Isolate by bisection.
  struct Interval {
    double a, b;
    int sa, sb;
  };
  Interval stack[256];
  int top = 0, found = 0;
  stack[top++] = {-bound, bound, signChanges(ch, -bound), signChanges(ch, bound)};
  while (top > 0) {
    const Interval iv = stack[--top];
    const int count = iv.sa - iv.sb;
    if (count <= 0) continue;
    if (count == 1) {
      const double fa = evaluate(ch.p[0], n, iv.a), fb = evaluate(ch.p[0], n, iv.b);
      if ((fa > 0) != (fb > 0) || fa == 0 || fb == 0) {
        roots[found++] = fa == 0   ? iv.a
                         : fb == 0 ? iv.b
                                   : polishRoot(ch.p[0], ch.p[1], n, iv.a, iv.b);
        continue;
      }
      // An even multiplicity or rounding: bisect further.
    }
    const double m = 0.5 * (iv.a + iv.b);
    if (iv.b - iv.a <= 1e-13 * std::max(1.0, std::abs(m)) || top + 2 > 256) {
      roots[found++] = m;  // a cluster narrower than the precision: one root
      continue;
    }
    const int sm = signChanges(ch, m);
    stack[top++] = {iv.a, m, iv.sa, sm};
    stack[top++] = {m, iv.b, sm, iv.sb};
  }
  std::sort(roots, roots + found);
  return found;
}

}  // namespace vidmap::geometry
