// How tests drive and inspect the fake libtensorflow (fake_tensorflow.cpp).
//
// The fake reads a "GraphDef" (the bytes of a .pb file, or <dir>/saved_model.pb) as a script:
//   fake-graphdef                          first line; anything else is "Invalid GraphDef"
//   node NAME OP DTYPE DIMS [SOURCE]       DTYPE: float double half bfloat16 int8 uint8 int32 int64 bool string;
//                                          DIMS: 1,?,4 (? unknown), * (unknown rank) or - (scalar)
//   tags serve,gpu                         SavedModel: the tag-set of its one MetaGraph
//   import_error MESSAGE...                importing fails with INVALID_ARGUMENT MESSAGE
//   run_error NODE MESSAGE...              fetching NODE fails with INTERNAL MESSAGE
// Fetching a node with a SOURCE placeholder returns the fed tensor (floats doubled, as Add(x, x)); a
// Placeholder returns what was fed; any other node zeros of its DIMS.
#pragma once

#include <string>
#include <vector>

namespace fake_tf {

// Objects created and not yet deleted, by kind, and calls made.
struct Counters {
    int statuses = 0;
    int graphs = 0;
    int sessions = 0;
    int sessions_open = 0;  // not closed with TF_CloseSession
    int tensors = 0;
    int buffers = 0;
    int session_options = 0;
    int import_options = 0;
    int device_lists = 0;
    int session_runs = 0;
};

Counters counters();
void set_devices(std::vector<std::string> types);  // what TF_SessionListDevices reports; default {"CPU"}
std::string last_config();                         // the bytes of the last TF_SetConfig
std::vector<std::string> last_tags();              // of the last TF_LoadSessionFromSavedModel
std::string last_export_dir();

}  // namespace fake_tf
