// Where a serving cell's requests go: the traffic loop (serving/traffic_loop) drives a RequestPort, the HTTP
// client (serving/http_stream_client's StreamClient) is one, and tests give the loop a scripted one. One thread
// drives every transfer: send() starts a request now (sent_ns taken there), poll() moves transfers for up to
// wait_ns (returning as soon as one ends) and returns the requests that ended.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/serving.hpp"

namespace inferbench::serving {

class RequestPort {
public:
    virtual ~RequestPort() = default;
    virtual void send(const PlannedRequest& request, std::int64_t scheduled_ns, bool warmup) = 0;
    virtual std::vector<ServedRequest> poll(std::int64_t wait_ns) = 0;
    virtual std::size_t in_flight() const = 0;
    virtual void cancel_all() = 0;  // every transfer in flight ends as `cancelled` (next poll returns them)
};

}  // namespace inferbench::serving
