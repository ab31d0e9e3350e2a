// The port a traffic loop drives requests through. One thread drives every transfer: send() starts a request
// now (its sent_ns taken there), poll() moves transfers for up to wait_ns (returning as soon as one ends) and
// returns the requests that ended. A fake port lets the traffic loop be tested without a server.
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
