#include "vidmap/mvs/residency.h"

#include <algorithm>
#include <limits>

#include "vidmap/core/error.h"

namespace vidmap::mvs {

ResidencyPlan planResidency(const std::vector<std::int64_t>& viewBytes,
                            const std::vector<std::vector<int>>& needs,
                            const std::vector<int>& refs, std::int64_t workingBytes,
                            std::int64_t budgetBytes, const std::vector<std::string>& names,
                            bool inGivenOrder) {
  const int n = static_cast<int>(viewBytes.size());
  auto nameOf = [&](int v) {
    return v < static_cast<int>(names.size()) ? names[v] : "view " + std::to_string(v);
  };
  auto needBytes = [&](int r) {
    std::int64_t b = 0;
    for (int v : needs[r]) b += viewBytes[v];
    return b;
  };
  for (int r : refs) {
    std::int64_t b = workingBytes + needBytes(r);
    if (b > budgetBytes)
      throw Error("mvs: the GPU memory budget of " + std::to_string(budgetBytes) +
                  " bytes is too small for " + nameOf(r) + " and its " +
                  std::to_string(needs[r].size() - 1) + " sources (" + std::to_string(b) +
                  " bytes)");
  }
  // The order: greedy by overlap with the resident set (which, before eviction, is
  // everything loaded so far; a good proxy that keeps neighbours together).
  std::vector<int> order;
  if (inGivenOrder) {
    order = refs;
  } else {
    std::vector<char> done(n, 0), resident(n, 0);
    std::vector<char> isRef(n, 0);
    for (int r : refs) isRef[r] = 1;
    std::vector<int> recent;  // the last reference's needs
    for (size_t k = 0; k < refs.size(); ++k) {
      int best = -1, bestScore = -1;
      for (int r : refs) {
        if (done[r]) continue;
        int score = 0;
        for (int v : needs[r])
          score += std::count(recent.begin(), recent.end(), v) ? 2 : resident[v];
        if (score > bestScore) best = r, bestScore = score;
      }
      done[best] = 1;
      order.push_back(best);
      recent = needs[best];
      for (int v : needs[best]) resident[v] = 1;
    }
  }
  // Next use of each view after step k, for Belady's eviction.
  std::vector<std::vector<int>> uses(n);
  for (size_t k = 0; k < order.size(); ++k)
    for (int v : needs[order[k]]) uses[v].push_back(static_cast<int>(k));
  auto nextUse = [&](int v, int k) {
    auto it = std::upper_bound(uses[v].begin(), uses[v].end(), k);
    return it == uses[v].end() ? std::numeric_limits<int>::max() : *it;
  };
  ResidencyPlan plan;
  plan.workingBytes = workingBytes;
  std::vector<char> resident(n, 0);
  std::int64_t residentBytes = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    int r = order[k];
    ResidencyStep step;
    step.ref = r;
    std::vector<char> needed(n, 0);
    std::int64_t missingBytes = 0;
    for (int v : needs[r]) {
      needed[v] = 1;
      if (!resident[v]) missingBytes += viewBytes[v];
    }
    // Evict until the missing views fit.
    while (workingBytes + residentBytes + missingBytes > budgetBytes) {
      int victim = -1, far = -1;
      for (int v = 0; v < n; ++v) {
        if (!resident[v] || needed[v]) continue;
        int u = nextUse(v, static_cast<int>(k));
        if (u > far) far = u, victim = v;
      }
      if (victim < 0) throw Error("mvs: residency plan: nothing left to evict");  // checked above
      resident[victim] = 0;
      residentBytes -= viewBytes[victim];
      step.evict.push_back(victim);
    }
    for (int v : needs[r]) {
      if (resident[v]) continue;
      resident[v] = 1;
      residentBytes += viewBytes[v];
      step.load.push_back(v);
      ++plan.uploads;
      plan.uploadBytes += viewBytes[v];
    }
    step.residentBytes = residentBytes;
    plan.peakBytes = std::max(plan.peakBytes, workingBytes + residentBytes);
    plan.steps.push_back(std::move(step));
  }
  return plan;
}

}  // namespace vidmap::mvs
