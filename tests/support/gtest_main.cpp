// gtest_main.cpp: the GoogleTest main of emprism_tests and emprism_gpu_tests, inside an MPI session (the collectives
// need MPI initialised; these unit tests run on one rank).
#include <gtest/gtest.h>

#include "comm/communicator.hpp"

int main(int argc, char** argv) {
  emprism::MpiSession mpi(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
