// A fake libtensorflow for the tests: the C functions inferbench's tensorflow backend calls, with the
// behaviour fake_tf_control.hpp describes, so that the backend's own logic (node lookup, tensor sizes,
// error propagation, options) runs on machines without TensorFlow.
#include <tensorflow/c/c_api.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "fake_tf_control.hpp"

struct TF_Status {
    TF_Code code = TF_OK;
    std::string message;
};

struct TF_Operation {
    std::string name;
    std::string op;
    TF_DataType type = TF_FLOAT;
    int rank = 0;  // -1: unknown
    std::vector<int64_t> dims;
    std::string source;  // the fed input node (op Placeholder) this node computes from
    std::string run_error;
    TF_Graph* graph = nullptr;
};

struct TF_Graph {
    std::vector<std::unique_ptr<TF_Operation>> nodes;
    std::vector<std::string> tags;
};

struct TF_Tensor {
    TF_DataType type = TF_FLOAT;
    std::vector<int64_t> dims;
    std::vector<char> data;
};

struct TF_SessionOptions {
    std::string config;
};
struct TF_ImportGraphDefOptions {};
struct TF_Session {
    TF_Graph* graph = nullptr;
    bool closed = false;
};
struct TF_DeviceList {
    std::vector<std::string> types;
};

namespace {

struct State {
    std::mutex mutex;
    fake_tf::Counters counters;
    std::vector<std::string> devices{"CPU"};
    std::string last_config;
    std::vector<std::string> last_tags;
    std::string last_export_dir;
};

State& state() {
    static State s;
    return s;
}

void count(int fake_tf::Counters::*field, int delta) {
    const std::lock_guard lock(state().mutex);
    state().counters.*field += delta;
}

void set(TF_Status* status, TF_Code code, std::string message) {
    status->code = code;
    status->message = std::move(message);
}

const std::pair<const char*, TF_DataType> kTypes[] = {
    {"float", TF_FLOAT}, {"double", TF_DOUBLE}, {"half", TF_HALF}, {"bfloat16", TF_BFLOAT16}, {"int8", TF_INT8},
    {"uint8", TF_UINT8}, {"int32", TF_INT32},   {"int64", TF_INT64}, {"bool", TF_BOOL},        {"string", TF_STRING},
};

const char* type_name(TF_DataType type) {
    for (const auto& [name, t] : kTypes) {
        if (t == type) return name;
    }
    return "unknown";
}

std::string shape_text(const TF_Operation& node) {
    if (node.rank < 0) return "<unknown>";
    std::string text = "[";
    for (std::size_t i = 0; i < node.dims.size(); ++i)
        text += (i ? "," : "") + (node.dims[i] < 0 ? std::string("?") : std::to_string(node.dims[i]));
    return text + "]";
}

void parse_dims(const std::string& text, TF_Operation& node) {
    if (text == "*") {
        node.rank = -1;
        return;
    }
    if (text == "-") return;  // a scalar
    std::stringstream items(text);
    for (std::string item; std::getline(items, item, ',');) node.dims.push_back(item == "?" ? -1 : std::stoll(item));
    node.rank = static_cast<int>(node.dims.size());
}

void parse_node(std::istringstream& line, TF_Graph& graph) {
    auto node = std::make_unique<TF_Operation>();
    node->graph = &graph;
    std::string type, dims;
    line >> node->name >> node->op >> type >> dims >> node->source;
    for (const auto& [name, t] : kTypes) {
        if (type == name) node->type = t;
    }
    parse_dims(dims, *node);
    graph.nodes.push_back(std::move(node));
}

std::string rest_of(std::istringstream& line) {
    std::string rest;
    std::getline(line >> std::ws, rest);
    return rest;
}

bool import_script(const std::string& script, TF_Graph& graph, TF_Status* status) {
    std::istringstream lines(script);
    std::string line;
    if (!std::getline(lines, line) || line != "fake-graphdef") {
        set(status, TF_INVALID_ARGUMENT, "Invalid GraphDef");
        return false;
    }
    while (std::getline(lines, line)) {
        std::istringstream words(line);
        std::string keyword;
        words >> keyword;
        if (keyword == "node") {
            parse_node(words, graph);
        } else if (keyword == "tags") {
            std::string tags = rest_of(words);
            std::stringstream items(tags);
            for (std::string tag; std::getline(items, tag, ',');) graph.tags.push_back(tag);
        } else if (keyword == "import_error") {
            set(status, TF_INVALID_ARGUMENT, rest_of(words));
            return false;
        } else if (keyword == "run_error") {
            std::string node;
            words >> node;
            for (auto& n : graph.nodes) {
                if (n->name == node) n->run_error = rest_of(words);
            }
        }
    }
    return true;
}

TF_Operation* find_node(TF_Graph* graph, const std::string& name) {
    for (auto& node : graph->nodes) {
        if (node->name == name) return node.get();
    }
    return nullptr;
}

std::size_t element_size(TF_DataType type) {
    switch (type) {
        case TF_DOUBLE: case TF_INT64: return 8;
        case TF_FLOAT: case TF_INT32: return 4;
        case TF_HALF: case TF_BFLOAT16: return 2;
        default: return 1;
    }
}

TF_Tensor* new_tensor(TF_DataType type, std::vector<int64_t> dims, std::vector<char> data) {
    count(&fake_tf::Counters::tensors, 1);
    return new TF_Tensor{type, std::move(dims), std::move(data)};
}

std::string feed_error(const TF_Operation& feed) {
    return "You must feed a value for placeholder tensor '" + feed.name + "' with dtype " +
           type_name(feed.type) + " and shape " + shape_text(feed);
}

// The fetched value of `node`, or nullptr with `status` set.
TF_Tensor* fetch(const TF_Operation& node, const TF_Output* inputs, TF_Tensor* const* values, int ninputs,
                 TF_Status* status) {
    if (!node.run_error.empty()) {
        set(status, TF_INTERNAL, node.run_error);
        return nullptr;
    }
    const TF_Operation* feed = node.op == "Placeholder" ? &node : nullptr;
    if (feed == nullptr && !node.source.empty()) feed = find_node(node.graph, node.source);
    if (feed == nullptr) {
        std::vector<int64_t> dims;
        for (int64_t d : node.dims) dims.push_back(d < 0 ? 1 : d);
        std::size_t elements = 1;
        for (int64_t d : dims) elements *= static_cast<std::size_t>(d);
        return new_tensor(node.type, dims, std::vector<char>(elements * element_size(node.type)));
    }
    for (int k = 0; k < ninputs; ++k) {
        if (inputs[k].oper != feed) continue;
        const TF_Tensor& fed = *values[k];
        if (fed.type != feed->type) {
            set(status, TF_INVALID_ARGUMENT, "Expects arg[" + std::to_string(k) + "] to be " +
                                                 type_name(feed->type) + " but " + type_name(fed.type) +
                                                 " is provided");
            return nullptr;
        }
        std::vector<char> data = fed.data;
        if (&node != feed && fed.type == TF_FLOAT) {
            for (std::size_t i = 0; i + sizeof(float) <= data.size(); i += sizeof(float)) {
                float v = 0;
                std::memcpy(&v, data.data() + i, sizeof v);
                v *= 2;
                std::memcpy(data.data() + i, &v, sizeof v);
            }
        }
        return new_tensor(fed.type, fed.dims, std::move(data));
    }
    set(status, TF_INVALID_ARGUMENT, feed_error(*feed));
    return nullptr;
}

}  // namespace

namespace fake_tf {

Counters counters() {
    const std::lock_guard lock(state().mutex);
    return state().counters;
}

void set_devices(std::vector<std::string> types) {
    const std::lock_guard lock(state().mutex);
    state().devices = std::move(types);
}

std::string last_config() {
    const std::lock_guard lock(state().mutex);
    return state().last_config;
}

std::vector<std::string> last_tags() {
    const std::lock_guard lock(state().mutex);
    return state().last_tags;
}

std::string last_export_dir() {
    const std::lock_guard lock(state().mutex);
    return state().last_export_dir;
}

}  // namespace fake_tf

extern "C" {

const char* TF_Version(void) { return "2.16.1-fake"; }

TF_Status* TF_NewStatus(void) {
    count(&fake_tf::Counters::statuses, 1);
    return new TF_Status;
}
void TF_DeleteStatus(TF_Status* s) {
    if (s != nullptr) count(&fake_tf::Counters::statuses, -1);
    delete s;
}
TF_Code TF_GetCode(const TF_Status* s) { return s->code; }
const char* TF_Message(const TF_Status* s) { return s->message.c_str(); }

TF_Buffer* TF_NewBufferFromString(const void* proto, size_t proto_len) {
    count(&fake_tf::Counters::buffers, 1);
    char* copy = new char[proto_len];
    std::memcpy(copy, proto, proto_len);
    return new TF_Buffer{copy, proto_len, [](void* data, size_t) { delete[] static_cast<char*>(data); }};
}
void TF_DeleteBuffer(TF_Buffer* buffer) {
    if (buffer == nullptr) return;
    count(&fake_tf::Counters::buffers, -1);
    if (buffer->data_deallocator != nullptr) buffer->data_deallocator(const_cast<void*>(buffer->data), buffer->length);
    delete buffer;
}

TF_Tensor* TF_AllocateTensor(TF_DataType type, const int64_t* dims, int num_dims, size_t len) {
    return new_tensor(type, std::vector<int64_t>(dims, dims + num_dims), std::vector<char>(len));
}
void TF_DeleteTensor(TF_Tensor* tensor) {
    if (tensor != nullptr) count(&fake_tf::Counters::tensors, -1);
    delete tensor;
}
TF_DataType TF_TensorType(const TF_Tensor* tensor) { return tensor->type; }
int TF_NumDims(const TF_Tensor* tensor) { return static_cast<int>(tensor->dims.size()); }
int64_t TF_Dim(const TF_Tensor* tensor, int dim_index) { return tensor->dims.at(static_cast<std::size_t>(dim_index)); }
size_t TF_TensorByteSize(const TF_Tensor* tensor) { return tensor->data.size(); }
void* TF_TensorData(const TF_Tensor* tensor) { return const_cast<char*>(tensor->data.data()); }

TF_SessionOptions* TF_NewSessionOptions(void) {
    count(&fake_tf::Counters::session_options, 1);
    return new TF_SessionOptions;
}
void TF_SetConfig(TF_SessionOptions* options, const void* proto, size_t proto_len, TF_Status* status) {
    options->config.assign(static_cast<const char*>(proto), proto_len);
    set(status, TF_OK, "");
}
void TF_DeleteSessionOptions(TF_SessionOptions* options) {
    if (options != nullptr) count(&fake_tf::Counters::session_options, -1);
    delete options;
}

TF_Graph* TF_NewGraph(void) {
    count(&fake_tf::Counters::graphs, 1);
    return new TF_Graph;
}
void TF_DeleteGraph(TF_Graph* graph) {
    if (graph != nullptr) count(&fake_tf::Counters::graphs, -1);
    delete graph;
}

int TF_GraphGetTensorNumDims(TF_Graph* /*graph*/, TF_Output output, TF_Status* status) {
    if (output.index != 0) {
        set(status, TF_OUT_OF_RANGE, "Node '" + output.oper->name + "' does not have output " + std::to_string(output.index));
        return -1;
    }
    set(status, TF_OK, "");
    return output.oper->rank;
}

void TF_GraphGetTensorShape(TF_Graph* /*graph*/, TF_Output output, int64_t* dims, int num_dims, TF_Status* status) {
    if (num_dims != output.oper->rank) {
        set(status, TF_INVALID_ARGUMENT, "Expected rank is " + std::to_string(output.oper->rank) + " but actual rank is " +
                                             std::to_string(num_dims));
        return;
    }
    std::copy(output.oper->dims.begin(), output.oper->dims.end(), dims);
    set(status, TF_OK, "");
}

const char* TF_OperationName(TF_Operation* oper) { return oper->name.c_str(); }
const char* TF_OperationOpType(TF_Operation* oper) { return oper->op.c_str(); }
int TF_OperationNumOutputs(TF_Operation* oper) { return oper->op == "NoOp" ? 0 : 1; }
TF_DataType TF_OperationOutputType(TF_Output oper_out) { return oper_out.oper->type; }

int TF_OperationOutputNumConsumers(TF_Output oper_out) {
    const auto& nodes = oper_out.oper->graph->nodes;
    return static_cast<int>(std::count_if(nodes.begin(), nodes.end(),
                                          [&](const auto& n) { return n->source == oper_out.oper->name; }));
}

TF_Operation* TF_GraphOperationByName(TF_Graph* graph, const char* oper_name) { return find_node(graph, oper_name); }

TF_Operation* TF_GraphNextOperation(TF_Graph* graph, size_t* pos) {
    if (*pos >= graph->nodes.size()) return nullptr;
    return graph->nodes[(*pos)++].get();
}

TF_ImportGraphDefOptions* TF_NewImportGraphDefOptions(void) {
    count(&fake_tf::Counters::import_options, 1);
    return new TF_ImportGraphDefOptions;
}
void TF_DeleteImportGraphDefOptions(TF_ImportGraphDefOptions* opts) {
    if (opts != nullptr) count(&fake_tf::Counters::import_options, -1);
    delete opts;
}

void TF_GraphImportGraphDef(TF_Graph* graph, const TF_Buffer* graph_def, const TF_ImportGraphDefOptions* /*options*/,
                            TF_Status* status) {
    set(status, TF_OK, "");
    import_script(std::string(static_cast<const char*>(graph_def->data), graph_def->length), *graph, status);
}

TF_Session* TF_NewSession(TF_Graph* graph, const TF_SessionOptions* opts, TF_Status* status) {
    {
        const std::lock_guard lock(state().mutex);
        state().last_config = opts->config;
        state().counters.sessions += 1;
        state().counters.sessions_open += 1;
    }
    set(status, TF_OK, "");
    return new TF_Session{graph, false};
}

TF_Session* TF_LoadSessionFromSavedModel(const TF_SessionOptions* session_options, const TF_Buffer* /*run_options*/,
                                         const char* export_dir, const char* const* tags, int tags_len, TF_Graph* graph,
                                         TF_Buffer* /*meta_graph_def*/, TF_Status* status) {
    std::vector<std::string> wanted(tags, tags + tags_len);
    {
        const std::lock_guard lock(state().mutex);
        state().last_tags = wanted;
        state().last_export_dir = export_dir;
    }
    std::ifstream in(std::string(export_dir) + "/saved_model.pb", std::ios::binary);
    if (!in) {
        set(status, TF_NOT_FOUND, std::string("SavedModel file does not exist at: ") + export_dir +
                                      "/{saved_model.pbtxt|saved_model.pb}");
        return nullptr;
    }
    const std::string script((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    set(status, TF_OK, "");
    if (!import_script(script, *graph, status)) return nullptr;
    std::vector<std::string> have = graph->tags;
    std::sort(wanted.begin(), wanted.end());
    std::sort(have.begin(), have.end());
    if (wanted != have) {
        std::string listed;
        for (const auto& tag : wanted) listed += tag + " ";
        set(status, TF_NOT_FOUND, "Could not find meta graph def matching supplied tags: { " + listed +
                                      "}. To inspect available tag-sets in the SavedModel, please use the SavedModel "
                                      "CLI: `saved_model_cli`");
        return nullptr;
    }
    return TF_NewSession(graph, session_options, status);
}

void TF_CloseSession(TF_Session* session, TF_Status* status) {
    if (!session->closed) count(&fake_tf::Counters::sessions_open, -1);
    session->closed = true;
    set(status, TF_OK, "");
}

void TF_DeleteSession(TF_Session* session, TF_Status* status) {
    if (session != nullptr) {
        if (!session->closed) count(&fake_tf::Counters::sessions_open, -1);
        count(&fake_tf::Counters::sessions, -1);
    }
    delete session;
    set(status, TF_OK, "");
}

void TF_SessionRun(TF_Session* session, const TF_Buffer* /*run_options*/, const TF_Output* inputs,
                   TF_Tensor* const* input_values, int ninputs, const TF_Output* outputs, TF_Tensor** output_values,
                   int noutputs, const TF_Operation* const* /*target_opers*/, int /*ntargets*/,
                   TF_Buffer* /*run_metadata*/, TF_Status* status) {
    count(&fake_tf::Counters::session_runs, 1);
    set(status, TF_OK, "");
    if (session->closed) {
        set(status, TF_INVALID_ARGUMENT, "Session has been closed.");
        return;
    }
    std::vector<TF_Tensor*> fetched;
    for (int j = 0; j < noutputs; ++j) {
        TF_Tensor* value = fetch(*outputs[j].oper, inputs, input_values, ninputs, status);
        if (value == nullptr) {
            for (TF_Tensor* t : fetched) TF_DeleteTensor(t);
            return;  // as TensorFlow: on an error no output is set
        }
        fetched.push_back(value);
    }
    std::copy(fetched.begin(), fetched.end(), output_values);
}

TF_DeviceList* TF_SessionListDevices(TF_Session* /*session*/, TF_Status* status) {
    count(&fake_tf::Counters::device_lists, 1);
    set(status, TF_OK, "");
    const std::lock_guard lock(state().mutex);
    return new TF_DeviceList{state().devices};
}
void TF_DeleteDeviceList(TF_DeviceList* list) {
    if (list != nullptr) count(&fake_tf::Counters::device_lists, -1);
    delete list;
}
int TF_DeviceListCount(const TF_DeviceList* list) { return static_cast<int>(list->types.size()); }
const char* TF_DeviceListType(const TF_DeviceList* list, int index, TF_Status* status) {
    if (index < 0 || static_cast<std::size_t>(index) >= list->types.size()) {
        set(status, TF_INVALID_ARGUMENT, "Out of bounds");
        return nullptr;
    }
    set(status, TF_OK, "");
    return list->types[static_cast<std::size_t>(index)].c_str();
}

}  // extern "C"
