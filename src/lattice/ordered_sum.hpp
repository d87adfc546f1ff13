// ordered_sum.hpp: sums of per-site terms on the host that give the same bits whatever the number of OpenMP threads
// and however they are scheduled: the terms are added in fixed blocks of kOrderedSumBlock sites (in site order within
// a block), and the block totals in block order. An OpenMP reduction(+) combines the threads' partial sums in an
// unspecified order, so two runs of the same input could write different plaquettes (seen: 3e-16 relative between two
// runs on one H100 host). Who may call: any host code; f is called once per index, from several threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace emprism {

inline constexpr std::int64_t kOrderedSumBlock = 4096;

template <typename F>
double ordered_sum(std::int64_t n, const F& f) {
  const std::int64_t blocks = (n + kOrderedSumBlock - 1) / kOrderedSumBlock;
  std::vector<double> part(static_cast<std::size_t>(std::max<std::int64_t>(blocks, 0)), 0.0);
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b) {
    double s = 0;
    const std::int64_t end = std::min(n, (b + 1) * kOrderedSumBlock);
    for (std::int64_t i = b * kOrderedSumBlock; i < end; ++i) s += f(i);
    part[static_cast<std::size_t>(b)] = s;
  }
  double sum = 0;
  for (double p : part) sum += p;
  return sum;
}

}  // namespace emprism
