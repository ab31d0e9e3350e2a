// The OpenAI API's streamed requests over HTTP/1.1 on libcurl's multi interface: one thread, many transfers
// at once (at most max_connections connections, kept alive and reused), every event timestamped on
// core/clock when the bytes that completed it were read. Each request ends with one RequestOutcome; a failed
// request keeps the chunks and times it got.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/serving.hpp"
#include "serving/endpoint.hpp"
#include "serving/request_port.hpp"

namespace inferbench::serving {

class StreamClient final : public RequestPort {
public:
    StreamClient(EndpointConfig config, std::size_t max_connections);
    ~StreamClient() override;
    StreamClient(const StreamClient&) = delete;
    StreamClient& operator=(const StreamClient&) = delete;

    // POST {base}/v1/completions or /v1/chat/completions with request_body(); begins connecting now.
    void send(const PlannedRequest& request, std::int64_t scheduled_ns, bool warmup) override;
    // Moves the transfers for up to wait_ns (whole milliseconds), sooner once one has ended.
    std::vector<ServedRequest> poll(std::int64_t wait_ns) override;
    std::size_t in_flight() const override;
    void cancel_all() override;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace inferbench::serving
