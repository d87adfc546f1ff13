// driver.hpp: the program's entry point behind main(): command line, input, set-up, the tasks, output.
// Exit codes: 0 all solves converged; 2 bad input or command line; 3 some solve did not converge (its result is still
// written with converged = false); 1 any other failure. Collective over MPI_COMM_WORLD.
#pragma once

namespace emprism::run {

int run_main(int argc, char** argv);

}  // namespace emprism::run
