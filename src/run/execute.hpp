// execute.hpp: one run from the checked configuration to the committed output file: set-up (peak bandwidth, the
// gauge field, [generate], the clover term, the solver), the checkpoint store with the file's header (root
// attributes, /input, /gauge), the loop over the tasks (each written, then marked complete; those a resumed run
// already holds are skipped), the metrics, the final rename. An ensemble (gauge.source = "ensemble") runs every task on
// every configuration in turn, each configuration read, written and solved below /configs/<id> (File::set_root) as a
// single-configuration run would at the root; a resumed ensemble skips the configurations already complete.
// Exit codes: kExitOk when every solve converged, kExitNotConverged otherwise; failures throw.
// Test hook: the environment variable EMPRISM_TEST_CRASH_AFTER_SOLVES=k kills every rank (SIGKILL, no clean-up)
// right after the k-th solve of this run is complete, as a crash or a Slurm time limit would.
// Who may call: the driver, on every rank (collective).
#pragma once

#include "comm/communicator.hpp"
#include "comm/process_grid.hpp"
#include "src/run/config.hpp"

namespace emprism::run {

int execute(const Config& cfg, Communicator& comm, const ProcessGrid& grid);

}  // namespace emprism::run
