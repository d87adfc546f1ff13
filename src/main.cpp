// main.cpp: emprism-mpi, the Wilson-clover solver. All work is in the run layer (src/run/driver.cpp).
#include "src/run/driver.hpp"

int main(int argc, char** argv) { return emprism::run::run_main(argc, argv); }
