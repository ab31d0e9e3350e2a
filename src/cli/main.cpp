#include "cli/app.hpp"

int main(int argc, char** argv) { return inferbench::cli::main(argc, argv); }
