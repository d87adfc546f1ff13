// main.cpp: emprism-mpi, the Wilson-clover solver. All work is in src/run/app.cpp.
#include "src/run/app.hpp"

int main(int argc, char** argv) { return emprism::run_main(argc, argv); }
