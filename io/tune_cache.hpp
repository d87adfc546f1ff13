// tune_cache.hpp: the tune-cache file of the kernel autotuner (its text: kernels/tune.hpp). Several ranks and several
// jobs may share one file: readers see either the old or the new file whole (writers rename a complete temporary
// file of the same directory over it), and writers merge under an exclusive flock of "<path>.lock", so concurrent
// jobs lose no entries. A corrupt or foreign file is never trusted: load_tune_cache returns its reason and no
// entries, and the next save_tune_cache replaces it with this run's entries.
// Who may call: one process per job for each function (the run: rank 0, which broadcasts what it read).
#pragma once

#include <optional>
#include <string>

#include "kernels/tune.hpp"

namespace emprism::io {

// The file's text, or nothing when it does not exist; throws std::runtime_error naming the file when it exists but
// cannot be read.
std::optional<std::string> read_tune_cache(const std::string& path);

// The entries of the file merged with `entries` (these win for keys both hold; the file's other entries are kept
// when it is a valid cache of `id`), written atomically. Returns the number of entries written; throws
// std::runtime_error naming the file when it cannot be written.
std::size_t save_tune_cache(const std::string& path, const TuneIdentity& id,
                            const std::vector<LaunchVariant>& candidates, const TuneEntries& entries);

}  // namespace emprism::io
