// The inferbench command line: a thin layer that parses, calls the library and prints.
#pragma once

namespace inferbench::cli {

int main(int argc, char** argv);

}  // namespace inferbench::cli
