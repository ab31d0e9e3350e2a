#include "serving/traffic_loop.hpp"

#include <algorithm>
#include <limits>
#include <list>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "serving/arrival_schedule.hpp"

namespace inferbench::serving {
namespace {

constexpr std::int64_t kNoDeadline = std::numeric_limits<std::int64_t>::max();
constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
constexpr std::int64_t kMaxConcurrency = std::int64_t{1} << 16;
// Polls after cancel_all() before requests a port never returned are given up as unanswered.
constexpr int kCancelPolls = 100;

std::int64_t saturating_add(std::int64_t a, std::int64_t b) { return a > kNoDeadline - b ? kNoDeadline : a + b; }

struct Pending {
    std::size_t pos = 0;
    std::int64_t arrival_ns = 0;  // open loop: when it arrives; closed loop: unused
};

struct Phase {
    bool warmup = false;
    bool open = false;
    std::int64_t slots = 1;  // closed loop: requests in flight at most
    std::list<Pending> pending;
    std::int64_t send_until_ns = kNoDeadline;
    bool cut_by_limit = false;  // max_requests left requests of the workload out of `pending`
};

class TrafficRun {
public:
    TrafficRun(RequestPort& port, TrafficClock& clock, std::span<const PlannedRequest> workload,
               const TrafficSettings& settings, const TrafficHooks& hooks)
        : port_(port), clock_(clock), workload_(workload), settings_(settings), hooks_(hooks) {
        link_turns();
    }

    TrafficResult run() {
        const auto warmups = static_cast<std::size_t>(settings_.warmup_requests);
        if (warmups > 0) {
            Phase warmup = warmup_phase(warmups);
            if (!run_phase(warmup)) return finish();
        }
        result_.measured_start_ns = clock_.now();
        Phase measured = measured_phase(warmups, result_.measured_start_ns);
        run_phase(measured);
        return finish();
    }

private:
    // previous_[pos]: the position of the turn before (same session, turn - 1), when earlier in the workload.
    void link_turns() {
        std::map<std::pair<std::int64_t, std::int64_t>, std::size_t> turns;
        previous_.assign(workload_.size(), kNone);
        for (std::size_t pos = 0; pos < workload_.size(); ++pos) {
            const auto& r = workload_[pos];
            if (!position_.emplace(r.index, pos).second)
                throw UserError(fmt::format("serving workload: request index {} appears twice", r.index));
            if (r.session < 0) continue;
            if (const auto it = turns.find({r.session, r.turn - 1}); it != turns.end()) previous_[pos] = it->second;
            turns.emplace(std::pair{r.session, r.turn}, pos);
        }
        end_ns_.assign(workload_.size(), -1);
        warmup_.assign(workload_.size(), false);
    }

    Phase warmup_phase(std::size_t count) {
        Phase phase;
        phase.warmup = true;
        const auto n = static_cast<std::int64_t>(count);
        phase.slots = settings_.scenario == Scenario::single_stream ? 1
                      : settings_.scenario == Scenario::concurrency ? settings_.concurrency
                                                                    : n;
        for (std::size_t pos = 0; pos < count; ++pos) {
            phase.pending.push_back({pos, 0});
            warmup_[pos] = true;
        }
        return phase;
    }

    Phase measured_phase(std::size_t first, std::int64_t start_ns) {
        Phase phase;
        phase.open = settings_.scenario == Scenario::server || settings_.scenario == Scenario::offline;
        phase.slots = settings_.scenario == Scenario::concurrency ? settings_.concurrency : 1;
        if (settings_.duration_ns > 0) phase.send_until_ns = saturating_add(start_ns, settings_.duration_ns);
        auto count = static_cast<std::int64_t>(workload_.size() - first);
        if (settings_.max_requests > 0 && settings_.max_requests < count) {
            count = settings_.max_requests;
            phase.cut_by_limit = true;
        }
        std::vector<std::int64_t> offsets(static_cast<std::size_t>(count), 0);
        if (settings_.scenario == Scenario::server)
            offsets = arrival_offsets(settings_.rate, settings_.burstiness, count, settings_.seed);
        for (std::size_t i = 0; i < offsets.size(); ++i) phase.pending.push_back({first + i, start_ns + offsets[i]});
        return phase;
    }

    bool turn_ended_before(std::size_t pos) const { return previous_[pos] == kNone || end_ns_[previous_[pos]] >= 0; }

    // Sends what is due now; returns when the next pending request arrives (kNoDeadline: none before a turn ends).
    std::int64_t send_due(Phase& phase, std::int64_t now) {
        for (auto it = phase.pending.begin(); it != phase.pending.end();) {
            if (!phase.open && static_cast<std::int64_t>(port_.in_flight()) >= phase.slots) break;
            if (phase.open && it->arrival_ns > now) return it->arrival_ns;  // later ones arrive later still
            if (!turn_ended_before(it->pos)) {
                ++it;
                continue;
            }
            const std::int64_t scheduled =
                phase.open ? std::max(it->arrival_ns, previous_[it->pos] == kNone ? 0 : end_ns_[previous_[it->pos]])
                           : now;
            port_.send(workload_[it->pos], scheduled, phase.warmup);
            ++(phase.warmup ? result_.warmup_sent : result_.sent);
            it = phase.pending.erase(it);
        }
        return kNoDeadline;
    }

    // Runs a phase until its requests ended; false when interrupted.
    bool run_phase(Phase& phase) {
        bool sending = true;
        std::int64_t drain_until = kNoDeadline;
        while (true) {
            if (hooks_.should_stop && hooks_.should_stop()) {
                result_.stop = TrafficStop::interrupted;
                cancel_in_flight();
                return false;
            }
            const std::int64_t now = clock_.now();
            std::int64_t next_due = kNoDeadline;
            if (sending && now >= phase.send_until_ns) {
                sending = false;
                result_.stop = TrafficStop::duration;
                drain_until = saturating_add(phase.send_until_ns, settings_.drain_ns);
            }
            if (sending) next_due = send_due(phase, now);
            if (sending && phase.pending.empty()) {
                sending = false;
                if (phase.cut_by_limit) result_.stop = TrafficStop::request_limit;
            }
            if (!sending && port_.in_flight() == 0) return true;
            if (now >= drain_until) {
                cancel_in_flight();
                return true;
            }
            wait(now, std::min({next_due, drain_until, sending ? phase.send_until_ns : kNoDeadline}));
        }
    }

    // Until `until` or a request ends, at most a poll slice (so that should_stop() is asked again).
    void wait(std::int64_t now, std::int64_t until) {
        const std::int64_t wake = std::min(saturating_add(now, kTrafficPollSliceNs), until);
        if (port_.in_flight() > 0)
            collect(port_.poll(std::max<std::int64_t>(wake - now, 0)));
        else if (until == kNoDeadline)
            throw std::logic_error("serving traffic: requests wait for turns that are neither sent nor pending");
        else
            clock_.sleep_until(wake);
    }

    void collect(std::vector<ServedRequest> batch) {
        if (batch.empty()) return;
        for (auto& r : batch) {
            const auto it = position_.find(r.index);
            if (it == position_.end())
                throw std::logic_error(
                    fmt::format("serving traffic: the port returned request {}, never sent", r.index));
            end_ns_[it->second] = std::max<std::int64_t>(r.end_ns, 0);
            r.warmup = warmup_[it->second];
            if (r.outcome == RequestOutcome::cancelled) ++result_.cancelled;
        }
        if (hooks_.on_finished) {
            hooks_.on_finished(std::move(batch));
        } else {
            result_.requests.insert(result_.requests.end(), std::make_move_iterator(batch.begin()),
                                    std::make_move_iterator(batch.end()));
        }
    }

    void cancel_in_flight() {
        if (port_.in_flight() == 0) return;
        port_.cancel_all();
        for (int i = 0; i < kCancelPolls && port_.in_flight() > 0; ++i) collect(port_.poll(kTrafficPollSliceNs));
        result_.unanswered = static_cast<std::int64_t>(port_.in_flight());
    }

    TrafficResult finish() {
        result_.end_ns = clock_.now();
        return std::move(result_);
    }

    RequestPort& port_;
    TrafficClock& clock_;
    std::span<const PlannedRequest> workload_;
    const TrafficSettings& settings_;
    const TrafficHooks& hooks_;
    std::unordered_map<std::int64_t, std::size_t> position_;
    std::vector<std::size_t> previous_;
    std::vector<std::int64_t> end_ns_;  // -1 until the request ended
    std::vector<bool> warmup_;
    TrafficResult result_;
};

}  // namespace

std::string_view to_string(TrafficStop stop) {
    switch (stop) {
        case TrafficStop::workload_done:
            return "workload_done";
        case TrafficStop::request_limit:
            return "request_limit";
        case TrafficStop::duration:
            return "duration";
        case TrafficStop::interrupted:
            return "interrupted";
    }
    return "unknown";
}

std::optional<std::string> traffic_problem(const TrafficSettings& s, std::int64_t workload_size) {
    if (s.scenario == Scenario::multi_stream)
        return std::string("serving cells run single_stream, concurrency, server or offline, not multi_stream");
    if (s.scenario == Scenario::concurrency && (s.concurrency < 1 || s.concurrency > kMaxConcurrency))
        return fmt::format("serving concurrency {} is outside [1, {}]", s.concurrency, kMaxConcurrency);
    if (s.scenario == Scenario::server && !(s.rate > 0 && s.rate <= kMaxArrivalRate))
        return fmt::format("serving rate {} is outside (0, {}] requests per second", s.rate, kMaxArrivalRate);
    if (s.scenario == Scenario::server && !(s.burstiness >= kMinBurstiness && s.burstiness <= kMaxBurstiness))
        return fmt::format("serving burstiness {} is outside [{}, {}]: 1 is Poisson arrivals", s.burstiness,
                           kMinBurstiness, kMaxBurstiness);
    if (s.warmup_requests < 0 || s.warmup_requests > workload_size)
        return fmt::format(
            "serving warmup_requests {} is outside [0, {}], the workload's requests: the warm-up takes "
            "the workload's first requests",
            s.warmup_requests, workload_size);
    if (s.max_requests < 0) return fmt::format("serving max_requests {} is negative (0: no limit)", s.max_requests);
    if (s.duration_ns < 0 || s.drain_ns < 0) return std::string("serving duration and drain time must be >= 0");
    return std::nullopt;
}

TrafficResult run_traffic(RequestPort& port, TrafficClock& clock, std::span<const PlannedRequest> workload,
                          const TrafficSettings& settings, const TrafficHooks& hooks) {
    if (auto problem = traffic_problem(settings, static_cast<std::int64_t>(workload.size()))) throw UserError(*problem);
    return TrafficRun(port, clock, workload, settings, hooks).run();
}

}  // namespace inferbench::serving
