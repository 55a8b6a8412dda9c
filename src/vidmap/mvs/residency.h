// Which views live on the GPU while PatchMatch runs, within a memory budget. A pass visits
// its reference views in an order that keeps sources resident (greedy: next is the view whose
// own data and sources overlap most with what is resident), loads what a reference needs,
// and evicts, when the budget demands it, the resident view used again farthest in the
// future (Belady's rule, exact here since the whole order is known). The executor follows
// the plan step for step, so the device peak equals plan.peakBytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vidmap::mvs {

struct ResidencyStep {
  int ref = -1;
  std::vector<int> evict;  // freed before the loads
  std::vector<int> load;
  std::int64_t residentBytes = 0;  // after the loads, without the working buffers
};

struct ResidencyPlan {
  std::vector<ResidencyStep> steps;  // one per reference, in processing order
  std::int64_t workingBytes = 0;     // allocated once for the pass
  std::int64_t peakBytes = 0;        // workingBytes + the largest residentBytes
  std::int64_t uploads = 0;          // view loads (a view may be loaded again after eviction)
  std::int64_t uploadBytes = 0;
};

// viewBytes[v]: device bytes of view v's resident data; needs[r]: the views reference r
// reads (itself and its sources); refs: the references of the pass. inGivenOrder: the steps
// visit refs as given (fusion, whose clusters depend on the order) instead of the greedy
// order. Throws vidmap::Error naming the view when one reference alone does not fit in
// budgetBytes.
ResidencyPlan planResidency(const std::vector<std::int64_t>& viewBytes,
                            const std::vector<std::vector<int>>& needs,
                            const std::vector<int>& refs, std::int64_t workingBytes,
                            std::int64_t budgetBytes, const std::vector<std::string>& names = {},
                            bool inGivenOrder = false);

}  // namespace vidmap::mvs
