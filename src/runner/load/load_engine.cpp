#include "runner/load/load_engine.hpp"

#include <algorithm>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace inferbench::runner {
namespace {

std::int64_t saturating_add(std::int64_t a, std::int64_t b) { return a > kNoDeadline - b ? kNoDeadline : a + b; }

// A device time summed over a multi_stream query's inferences; not measured if any was not.
void accumulate(std::int64_t& total, std::int64_t part) {
    total = (total == kNotMeasured || part == kNotMeasured) ? kNotMeasured : total + part;
}

// What a worker takes from the queue: queries [first, first + count) (a batch) with their arrivals, or
// one inference (part) of a multi_stream query, begun at dispatch_ns. Each worker reuses its own.
struct Dispatch {
    std::int64_t first = 0;
    std::int64_t count = 1;
    std::int64_t part = 0;
    std::int64_t dispatch_ns = 0;
    std::vector<std::int64_t> arrivals;
};

// A multi_stream query whose inferences are under way.
struct QueryParts {
    std::int64_t done = 0;
    std::int64_t first_dispatch_ns = kNoDeadline;  // the earliest of its inferences' (they may run at once)
    DeviceTimes sum{0, 0, 0, 0};
};

// The smallest instance that holds `count` queries' samples, else the largest.
const LoadInstance& instance_for(const StreamInstances& instances, std::int64_t count) {
    for (const LoadInstance& instance : instances)
        if (instance.batch_size >= count) return instance;
    return instances.back();
}

class LoadRun {
public:
    LoadRun(const LoadPlan& plan, TraceSink sink, std::int64_t capacity, const std::atomic<std::int32_t>& stop,
            LoadClock& clock, std::int64_t max_batch, std::size_t workers)
        : plan_(plan), sink_(sink), capacity_(capacity), stop_(stop), clock_(clock), max_batch_(max_batch),
          open_loop_(!plan.schedule_ns.empty()),
          race_(open_loop_ && workers > 1 && !plan.batcher && plan.inferences_per_query == 1) {
        start_ = clock_.now() + plan_.lead_ns;
        if (open_loop_) {
            const auto queries = std::min<std::int64_t>(static_cast<std::int64_t>(plan_.schedule_ns.size()), capacity_);
            arrivals_.reserve(static_cast<std::size_t>(queries));
            for (std::int64_t i = 0; i < queries; ++i) arrivals_.push_back(start_ + plan_.schedule_ns[static_cast<std::size_t>(i)]);
            known_ = queries;
        } else {
            known_ = std::min(plan_.clients, capacity_);
            pending_.assign(static_cast<std::size_t>(known_), start_);
        }
        result_.scheduled = known_;
        result_.start_ns = start_;
    }

    void worker(const StreamInstances& instances) {
        try {
            Dispatch d;
            while (claim(d)) {
                const LoadInstance& instance = instance_for(instances, d.count);
                DeviceTimes times;
                instance.backend->infer(times);
                complete(d, clock_.now(), times, instance.batch_size);
            }
        } catch (...) {
            const std::lock_guard lock(m_);
            if (!error_) error_ = std::current_exception();
            ended_ = true;
            clock_.notify(changed_);
        }
        clock_.thread_ends();
    }

    LoadResult finish() {
        if (error_) std::rethrow_exception(error_);
        result_.completed = written_;
        result_.wall_ns = written_ > 0 ? last_end_ - start_ : 0;
        // Completion order to arrival order (ties, offline's, keep their completion order).
        std::stable_sort(sink_.records, sink_.records + written_,
                         [](const IterationRecord& a, const IterationRecord& b) { return a.start_ns < b.start_ns; });
        return result_;
    }

private:
    // No query will be taken any more: the run ended, or every query was taken and no client will issue
    // another (open loop: the schedule is all there is; closed loop: nothing in flight, or no admissions).
    bool no_more_work() const {
        return ended_ || (next_ >= known_ && (open_loop_ || !admitting_ || in_flight_ == 0));
    }

    bool claim(Dispatch& d) {
        if (race_) return claim_on_arrival(d);
        std::unique_lock lock(m_);
        if (plan_.batcher) return claim_batch(lock, d);
        clock_.wait(lock, changed_, [&] { return no_more_work() || next_ < known_; }, kNoDeadline);
        if (ended_ || next_ >= known_) return false;
        d.first = next_;
        d.count = 1;
        d.part = next_part_;
        d.arrivals.assign(1, arrival(next_));
        if (++next_part_ == plan_.inferences_per_query) {
            next_part_ = 0;
            take(1);
        }
        ++in_flight_;
        lock.unlock();
        d.dispatch_ns = clock_.sleep_until(d.arrivals.front());  // closed loop: it has already arrived
        lock.lock();
        return admit(d);
    }

    // Open loop on several workers: a free worker waits for the oldest query not yet taken to arrive, without
    // taking it first, and whichever worker runs at that moment takes it. A worker held up by the machine (the
    // kernel or the hypervisor took its CPU) then delays no query that another worker is free to begin.
    // The arrivals are fixed for the run, so they are read without the lock; next_taken_ mirrors next_.
    bool claim_on_arrival(Dispatch& d) {
        while (true) {
            const std::int64_t i = next_taken_.load(std::memory_order_acquire);
            if (i >= known_) break;
            clock_.sleep_until(arrivals_[static_cast<std::size_t>(i)]);
            if (next_taken_.load(std::memory_order_acquire) != i) continue;  // another worker took it meanwhile
            std::unique_lock lock(m_);
            if (ended_) return false;
            if (next_ != i) continue;
            d.first = i;
            d.count = 1;
            d.part = 0;
            d.arrivals.assign(1, arrival(i));
            take(1);
            ++in_flight_;
            d.dispatch_ns = clock_.now();
            return admit(d);
        }
        return false;
    }

    bool claim_batch(std::unique_lock<std::mutex>& lock, Dispatch& d) {
        // One worker at a time forms a batch (the head of the queue); the others wait their turn.
        clock_.wait(lock, changed_, [&] { return no_more_work() || (!head_busy_ && next_ < known_); }, kNoDeadline);
        if (ended_ || next_ >= known_) return false;
        head_busy_ = true;
        d.first = next_;
        d.part = 0;
        d.dispatch_ns = batch_time(lock, d.first);
        if (ended_) {
            head_busy_ = false;
            clock_.notify(changed_);
            return false;
        }
        d.arrivals.clear();
        for (std::int64_t i = d.first; i < known_ && i - d.first < max_batch_ && arrival(i) <= d.dispatch_ns; ++i)
            d.arrivals.push_back(arrival(i));
        d.count = static_cast<std::int64_t>(d.arrivals.size());
        take(d.count);
        head_busy_ = false;
        ++in_flight_;
        clock_.notify(changed_);
        return admit(d);
    }

    // When the batch that begins with query `first` goes: max_batch queries have arrived, the first has
    // waited the longest delay, or no more can come. Waits for it, with `lock` released meanwhile.
    std::int64_t batch_time(std::unique_lock<std::mutex>& lock, std::int64_t first) {
        while (true) {
            std::int64_t due = saturating_add(arrival(first), plan_.max_queue_delay_ns);
            if (first + max_batch_ - 1 < known_) due = std::min(due, arrival(first + max_batch_ - 1));
            const bool more_may_come = !open_loop_ && admitting_ && in_flight_ > 0;
            if (!more_may_come) due = std::min(due, arrival(known_ - 1));
            due = std::max(due, arrival(first));
            const std::int64_t now = clock_.now();
            if (now >= due || ended_) return now;
            if (open_loop_) {  // every arrival is known: only time passes
                lock.unlock();
                const std::int64_t at = clock_.sleep_until(due);
                lock.lock();
                return at;
            }
            const std::int64_t known = known_;
            clock_.wait(lock, changed_, [&] { return known_ != known || ended_; }, due);
        }
    }

    // With the lock held, for a query just taken: ends the run on a stop request or a query that waited
    // too long (its queries are then not begun), else counts it as issued.
    bool admit(const Dispatch& d) {
        const std::int64_t wait = d.dispatch_ns - d.arrivals.front();
        result_.longest_wait_ns = std::max(result_.longest_wait_ns, wait);
        const bool stop = stop_.load(std::memory_order_relaxed) != 0;
        const bool behind = open_loop_ && wait > plan_.fall_behind_ns;
        if (stop || behind || ended_) {
            result_.stopped = result_.stopped || stop;
            result_.fell_behind = result_.fell_behind || behind;
            ended_ = true;
            --in_flight_;
            clock_.notify(changed_);
            return false;
        }
        if (plan_.inferences_per_query > 1) {
            std::int64_t& first = parts_[d.first].first_dispatch_ns;
            first = std::min(first, d.dispatch_ns);
        }
        if (d.part == 0) result_.issued += d.count;
        return true;
    }

    // The arrival of query i, not yet taken (closed loop) or any (open loop).
    std::int64_t arrival(std::int64_t i) const {
        return open_loop_ ? arrivals_[static_cast<std::size_t>(i)] : pending_[static_cast<std::size_t>(i - next_)];
    }

    // The `count` oldest waiting queries are taken.
    void take(std::int64_t count) {
        if (!open_loop_) pending_.erase(pending_.begin(), pending_.begin() + count);
        next_ += count;
        next_taken_.store(next_, std::memory_order_release);
    }

    void complete(const Dispatch& d, std::int64_t end_ns, const DeviceTimes& times, std::int64_t batch_size) {
        const std::lock_guard lock(m_);
        ++result_.inferences;
        if (plan_.batcher) result_.padded_samples += batch_size - d.count;
        --in_flight_;
        if (plan_.inferences_per_query > 1) {
            complete_part(d, end_ns, times);
        } else {
            for (std::int64_t k = 0; k < d.count; ++k) {
                write(d.arrivals[static_cast<std::size_t>(k)], d.dispatch_ns, end_ns, times);
                issue_next(end_ns);
            }
        }
        if (stop_.load(std::memory_order_relaxed) != 0) {
            result_.stopped = true;
            ended_ = true;
        }
        clock_.notify(changed_);
    }

    // A multi_stream query completes with its last inference; its device times are their sums.
    void complete_part(const Dispatch& d, std::int64_t end_ns, const DeviceTimes& times) {
        const auto found = parts_.try_emplace(d.first).first;
        QueryParts& parts = found->second;
        accumulate(parts.sum.enqueue_ns, times.enqueue_ns);
        accumulate(parts.sum.h2d_ns, times.h2d_ns);
        accumulate(parts.sum.compute_ns, times.compute_ns);
        accumulate(parts.sum.d2h_ns, times.d2h_ns);
        if (++parts.done < plan_.inferences_per_query) return;
        write(d.arrivals.front(), parts.first_dispatch_ns, end_ns, parts.sum);
        parts_.erase(found);
        issue_next(end_ns);
    }

    void write(std::int64_t arrival, std::int64_t dispatch_ns, std::int64_t end_ns, const DeviceTimes& times) {
        if (written_ >= capacity_) return;
        sink_.records[written_] = IterationRecord{arrival,         end_ns - arrival, times.enqueue_ns,
                                                  times.h2d_ns,    times.compute_ns, times.d2h_ns,
                                                  dispatch_ns - arrival};
        ++written_;
        sink_.published->store(written_, std::memory_order_release);
        last_end_ = std::max(last_end_, end_ns);
    }

    // Closed loop: the client of a completed query issues its next one now, while the run admits them.
    void issue_next(std::int64_t end_ns) {
        if (open_loop_ || !admitting_) return;
        const bool long_enough = end_ns - start_ >= plan_.duration_ns && written_ >= plan_.min_queries;
        if (long_enough || known_ >= capacity_) {
            admitting_ = false;
            return;
        }
        pending_.push_back(end_ns);
        ++known_;
        result_.scheduled = known_;
    }

    const LoadPlan& plan_;
    TraceSink sink_;
    const std::int64_t capacity_;
    const std::atomic<std::int32_t>& stop_;
    LoadClock& clock_;
    const std::int64_t max_batch_;
    const bool open_loop_;
    const bool race_;  // open loop, several workers, one inference per query: claim_on_arrival()

    std::mutex m_;
    std::condition_variable changed_;
    std::int64_t start_ = 0;
    std::vector<std::int64_t> arrivals_;  // open loop: every query's arrival (absolute)
    std::deque<std::int64_t> pending_;    // closed loop: the arrivals of queries issued and not taken
    std::int64_t known_ = 0;              // queries scheduled or issued so far
    std::int64_t next_ = 0;               // the oldest query not yet taken
    std::atomic<std::int64_t> next_taken_{0};  // next_, for claim_on_arrival() to read without the lock
    std::int64_t next_part_ = 0;          // multi_stream: its next inference
    std::int64_t in_flight_ = 0;          // dispatches taken and not completed
    bool admitting_ = true;               // closed loop: clients still issue queries
    bool head_busy_ = false;              // the batcher: a worker is forming a batch
    bool ended_ = false;                  // stopped, fell behind or failed
    std::unordered_map<std::int64_t, QueryParts> parts_;  // multi_stream: queries under way
    std::int64_t written_ = 0;
    std::int64_t last_end_ = 0;
    LoadResult result_;
    std::exception_ptr error_;
};

}  // namespace

LoadResult run_load(std::span<const StreamInstances> streams, const LoadPlan& plan, TraceSink sink,
                    std::int64_t capacity, const std::atomic<std::int32_t>& stop, LoadClock& clock) {
    if (streams.empty() || streams.front().empty()) return {};
    LoadRun run(plan, sink, capacity, stop, clock, streams.front().back().batch_size, streams.size());
    clock.threads_start(static_cast<int>(streams.size()));
    if (streams.size() == 1) {
        run.worker(streams.front());
    } else {
        std::vector<std::thread> workers;
        workers.reserve(streams.size());
        for (const StreamInstances& instances : streams) workers.emplace_back([&run, &instances] { run.worker(instances); });
        for (std::thread& worker : workers) worker.join();
    }
    return run.finish();
}

}  // namespace inferbench::runner
