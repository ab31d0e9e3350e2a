#include "backends/tensorflow/tensorflow_backend.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/batch_shape.hpp"
#include "backends/tensorflow/tensorflow_config.hpp"
#include "core/error.hpp"

namespace inferbench {
namespace {

constexpr std::size_t kMaxListedNodes = 10;

TfSessionOptions make_session_options(const SessionConfig& config) {
    TfSessionOptions options(TF_NewSessionOptions());
    const std::string proto = encode_config_proto(config);
    TfStatus status;
    TF_SetConfig(options.get(), proto.data(), proto.size(), status.get());
    status.check("TensorFlow rejects the session configuration");
    return options;
}

TfDevices list_devices(TF_Session* session) {
    TfStatus status;
    const TfDeviceList list(TF_SessionListDevices(session, status.get()));
    if (!status.ok()) return {0, "", status.message()};
    TfDevices devices;
    std::vector<std::string> names;
    for (int i = 0; i < TF_DeviceListCount(list.get()); ++i) {
        const std::string type = TF_DeviceListType(list.get(), i, status.get());
        if (!status.ok()) return {0, "", status.message()};
        names.push_back(fmt::format("{}:{}", type, type == "GPU" ? devices.gpus : 0));
        if (type == "GPU") ++devices.gpus;
    }
    devices.listing = fmt::format("{}", fmt::join(names, ", "));
    return devices;
}

std::string list_or_none(const std::vector<std::string>& names) {
    if (names.empty()) return "none";
    const std::size_t shown = std::min(names.size(), kMaxListedNodes);
    return fmt::format("{}{}", fmt::join(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
                       names.size() > shown ? fmt::format(" and {} more", names.size() - shown) : "");
}

std::vector<char> read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) throw std::runtime_error(fmt::format("cannot read TensorFlow model {}", path));
    return bytes;
}

const HostTensor& find_input(std::span<const HostTensor> given, const TensorInfo& wanted) {
    const auto found = std::find_if(given.begin(), given.end(), [&](const HostTensor& t) { return t.info.name == wanted.name; });
    if (found == given.end()) throw std::runtime_error(fmt::format("prepare(): no data for input {}", wanted.name));
    if (found->info.dtype != wanted.dtype || found->data.size() != wanted.byte_size())
        throw std::runtime_error(fmt::format("prepare(): input {} needs {} bytes of {}, got {} bytes of {}", wanted.name,
                                             wanted.byte_size(), to_string(wanted.dtype), found->data.size(),
                                             to_string(found->info.dtype)));
    return *found;
}

}  // namespace

const TfDevices& TensorFlowBackend::devices() const {
    if (devices_) return *devices_;
    if (session_) return devices_.emplace(list_devices(session_.get()));
    try {
        SessionConfig config;
        config.allow_growth = true;
        const TfSessionOptions options = make_session_options(config);
        const TfGraph graph(TF_NewGraph());
        TfStatus status;
        const TfSession probe(TF_NewSession(graph.get(), options.get(), status.get()));
        if (!status.ok()) return devices_.emplace(TfDevices{0, "", status.message()});
        return devices_.emplace(list_devices(probe.get()));
    } catch (const std::exception& e) {
        return devices_.emplace(TfDevices{0, "", e.what()});
    }
}

Capabilities TensorFlowBackend::capabilities() const {
    Capabilities caps;
    caps.devices = {DeviceKind::cpu};
    if (devices().gpus > 0) caps.devices.push_back(DeviceKind::cuda);
    caps.precisions = {Precision::fp32};
    caps.model_formats = {"pb"};
    caps.dynamic_batch = true;
    caps.device_timing = false;
    return caps;
}

std::optional<std::string> TensorFlowBackend::unsupported_reason(const BenchmarkSpec& spec) const {
    if (spec.precision != Precision::fp32)
        return fmt::format("tensorflow runs a graph in its own precision, which inferbench calls fp32; {} "
                           "needs a graph converted to {} beforehand",
                           to_string(spec.precision), to_string(spec.precision));
    if (spec.device.kind != DeviceKind::cuda) return std::nullopt;
    const TfDevices& found = devices();
    if (!found.problem.empty()) return fmt::format("tensorflow cannot list its devices: {}", found.problem);
    if (found.gpus == 0)
        return fmt::format("this TensorFlow library has no GPU support or sees no GPU (its devices: {}); use "
                           "libtensorflow-gpu with CUDA for cuda cells",
                           found.listing);
    if (spec.device.index >= found.gpus)
        return fmt::format("there is no {} (TensorFlow sees {} GPU{})", to_string(spec.device), found.gpus,
                           found.gpus == 1 ? "" : "s");
    return std::nullopt;
}

void TensorFlowBackend::load(const std::string& model_path, const BenchmarkSpec& spec) {
    const TensorFlowOptions options = parse_tensorflow_options(spec.backend_options);
    reset();
    SessionConfig config;
    config.intra_op_threads = options.intra_op_threads;
    config.inter_op_threads = options.inter_op_threads;
    if (spec.device.kind == DeviceKind::cpu) config.hide_gpus = true;
    else config.visible_gpu = spec.device.index;
    const TfSessionOptions session_options = make_session_options(config);

    const std::filesystem::path path(model_path);
    std::error_code ec;
    graph_.reset(TF_NewGraph());
    if (std::filesystem::is_directory(path, ec)) open_saved_model(path, *session_options, options.tags);
    else if (path.filename() == "saved_model.pb") open_saved_model(path.parent_path(), *session_options, options.tags);
    else if (!std::filesystem::is_regular_file(path, ec))
        throw std::runtime_error(fmt::format("cannot load TensorFlow model {}: no such file", model_path));
    else open_frozen_graph(model_path, *session_options);
    model_path_ = model_path;

    if (spec.device.kind == DeviceKind::cuda && devices().gpus == 0)
        throw EnvironmentError(fmt::format("TensorFlow sees no GPU for {} (its devices: {})", to_string(spec.device),
                                           devices().listing));
    resolve_inputs(options.inputs, spec.batch_size);
    resolve_outputs(options.outputs);
}

void TensorFlowBackend::open_frozen_graph(const std::string& path, const TF_SessionOptions& options) {
    const std::vector<char> bytes = read_bytes(path);
    const TfBuffer buffer(TF_NewBufferFromString(bytes.data(), bytes.size()));
    const TfImportOptions import_options(TF_NewImportGraphDefOptions());
    TfStatus status;
    TF_GraphImportGraphDef(graph_.get(), buffer.get(), import_options.get(), status.get());
    status.check(fmt::format("cannot load TensorFlow model {}: not a GraphDef TensorFlow can import", path));
    session_.reset(TF_NewSession(graph_.get(), &options, status.get()));
    status.check(fmt::format("cannot start a TensorFlow session for {}", path));
}

void TensorFlowBackend::open_saved_model(const std::filesystem::path& dir, const TF_SessionOptions& options,
                                         const std::vector<std::string>& tags) {
    std::vector<const char*> tag_names;
    for (const std::string& tag : tags) tag_names.push_back(tag.c_str());
    TfStatus status;
    session_.reset(TF_LoadSessionFromSavedModel(&options, nullptr, dir.c_str(), tag_names.data(),
                                                static_cast<int>(tag_names.size()), graph_.get(), nullptr, status.get()));
    status.check(fmt::format("cannot load TensorFlow SavedModel {} (tags {})", dir.string(), fmt::join(tags, ",")));
}

TF_Output TensorFlowBackend::find_tensor(const TensorName& name, std::string_view option) const {
    TF_Operation* node = TF_GraphOperationByName(graph_.get(), name.node.c_str());
    if (node == nullptr) {
        const bool inputs = option == "inputs";
        throw UserError(fmt::format("tensorflow option {}: {} has no node named '{}'; its {}: {}", option, model_path_,
                                    name.node, inputs ? "Placeholder nodes" : "nodes whose outputs nothing consumes",
                                    list_or_none(inputs ? feed_nodes() : unconsumed_nodes())));
    }
    if (name.index >= TF_OperationNumOutputs(node))
        throw UserError(fmt::format("tensorflow option {}: node '{}' of {} has {} outputs, so there is no '{}'", option,
                                    name.node, model_path_, TF_OperationNumOutputs(node), name.text()));
    return TF_Output{node, name.index};
}

void TensorFlowBackend::resolve_inputs(const std::vector<TensorName>& names, std::int64_t batch) {
    std::vector<TensorName> wanted = names;
    if (wanted.empty()) {
        for (const std::string& node : feed_nodes()) wanted.push_back({node, 0});
        if (wanted.empty())
            throw UserError(fmt::format("{} has no Placeholder node to feed; name its inputs with "
                                        "backend_options.tensorflow.inputs",
                                        model_path_));
    }
    for (const TensorName& name : wanted) {
        const TF_Output port = find_tensor(name, "inputs");
        const TF_DataType type = TF_OperationOutputType(port);
        const auto dtype = to_dtype(type);
        if (!dtype)
            throw std::runtime_error(fmt::format("input {} of {} has element type {}, which inferbench cannot feed",
                                                 name.text(), model_path_, data_type_name(type)));
        TfStatus status;
        const int rank = TF_GraphGetTensorNumDims(graph_.get(), port, status.get());
        status.check(fmt::format("cannot read the shape of input {}", name.text()));
        if (rank < 0)
            throw std::runtime_error(fmt::format("input {} of {} has an unknown shape; freeze the graph with the input's "
                                                 "shape set",
                                                 name.text(), model_path_));
        std::vector<std::int64_t> shape(static_cast<std::size_t>(rank));
        TF_GraphGetTensorShape(graph_.get(), port, shape.data(), rank, status.get());
        status.check(fmt::format("cannot read the shape of input {}", name.text()));
        inputs_.push_back({name.text(), *dtype, resolve_batch_shape(shape, batch, model_path_, name.text())});
        input_ports_.push_back(port);
    }
}

void TensorFlowBackend::resolve_outputs(const std::vector<TensorName>& names) {
    if (names.empty())
        throw UserError(fmt::format("tensorflow needs backend_options.tensorflow.outputs: the tensors to fetch, "
                                    "comma-separated node[:index] (a graph does not say which are its outputs); nodes "
                                    "of {} whose outputs nothing consumes: {}",
                                    model_path_, list_or_none(unconsumed_nodes())));
    for (const TensorName& name : names) output_ports_.push_back(find_tensor(name, "outputs"));
}

std::vector<std::string> TensorFlowBackend::feed_nodes() const {
    std::vector<std::string> nodes;
    std::size_t position = 0;
    while (TF_Operation* node = TF_GraphNextOperation(graph_.get(), &position)) {
        if (std::string_view(TF_OperationOpType(node)) == "Placeholder") nodes.emplace_back(TF_OperationName(node));
    }
    return nodes;
}

std::vector<std::string> TensorFlowBackend::unconsumed_nodes() const {
    std::vector<std::string> nodes;
    std::size_t position = 0;
    while (TF_Operation* node = TF_GraphNextOperation(graph_.get(), &position)) {
        const int outputs = TF_OperationNumOutputs(node);
        bool consumed = outputs == 0;
        for (int i = 0; i < outputs && !consumed; ++i) consumed = TF_OperationOutputNumConsumers(TF_Output{node, i}) > 0;
        if (!consumed) nodes.emplace_back(TF_OperationName(node));
    }
    return nodes;
}

void TensorFlowBackend::prepare(std::span<const HostTensor> inputs) {
    if (!session_) throw std::logic_error("TensorFlowBackend::prepare() before load()");
    input_raw_.clear();
    input_values_.clear();
    for (const TensorInfo& info : inputs_) {
        const HostTensor& given = find_input(inputs, info);
        TfTensor tensor(TF_AllocateTensor(to_tf_type(info.dtype), info.shape.data(), static_cast<int>(info.shape.size()),
                                          info.byte_size()));
        if (!tensor || TF_TensorByteSize(tensor.get()) != info.byte_size())
            throw std::runtime_error(fmt::format("TensorFlow cannot allocate {} bytes for input {}", info.byte_size(), info.name));
        if (!given.data.empty()) std::memcpy(TF_TensorData(tensor.get()), given.data.data(), given.data.size());
        input_raw_.push_back(tensor.get());
        input_values_.push_back(std::move(tensor));
    }
    output_values_.clear();
    output_values_.resize(output_ports_.size());
    output_raw_.assign(output_ports_.size(), nullptr);
}

void TensorFlowBackend::infer(DeviceTimes& /*times*/) {
    if (!session_ || input_values_.size() != input_ports_.size() || output_raw_.size() != output_ports_.size())
        throw std::logic_error("TensorFlowBackend::infer() before prepare()");
    for (TfTensor& output : output_values_) output.reset();  // last run's outputs go before this run makes new ones
    std::fill(output_raw_.begin(), output_raw_.end(), nullptr);
    TF_SessionRun(session_.get(), nullptr, input_ports_.data(), input_raw_.data(), static_cast<int>(input_ports_.size()),
                  output_ports_.data(), output_raw_.data(), static_cast<int>(output_ports_.size()), nullptr, 0, nullptr,
                  run_status_.get());
    for (std::size_t i = 0; i < output_raw_.size(); ++i) output_values_[i].reset(output_raw_[i]);
    if (!run_status_.ok())
        throw std::runtime_error(fmt::format("TensorFlow failed to run {}: {}", model_path_, run_status_.message()));
}

std::vector<const TF_Tensor*> TensorFlowBackend::outputs() const {
    std::vector<const TF_Tensor*> result;
    for (const TfTensor& output : output_values_) result.push_back(output.get());
    return result;
}

void TensorFlowBackend::reset() {
    output_values_.clear();
    output_raw_.clear();
    input_values_.clear();
    input_raw_.clear();
    input_ports_.clear();
    output_ports_.clear();
    inputs_.clear();
    session_.reset();
    graph_.reset();
    devices_.reset();  // the next session may see other devices (cpu cells hide the GPUs)
    model_path_.clear();
}

std::unique_ptr<Backend> make_tensorflow_backend() { return std::make_unique<TensorFlowBackend>(); }

}  // namespace inferbench
