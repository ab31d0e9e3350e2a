// A clock for tests of the load scenarios (runner/load/load_clock.hpp) on which time moves only when every
// thread of the scenario waits: then it jumps to the earliest time one of them waits for. A scripted
// backend (scripted_backend.hpp) that "takes" 2 ms sleeps until now + 2 ms on it, so every arrival, queue
// wait and completion is exact and can be computed by hand, with any number of streams.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <mutex>

#include "runner/load/load_clock.hpp"

namespace inferbench::testing {

class VirtualClock final : public runner::LoadClock {
public:
    explicit VirtualClock(std::int64_t start_ns = 0) : now_(start_ns) {}

    std::int64_t now() override {
        const std::lock_guard lock(m_);
        return now_;
    }

    std::int64_t sleep_until(std::int64_t t_ns) override {
        std::unique_lock lock(m_);
        if (now_ >= t_ns) return now_;
        Blocked me{t_ns, false};
        block(lock, me);
        return now_;
    }

    void wait(std::unique_lock<std::mutex>& outer, std::condition_variable& /*changed*/, const std::function<bool()>& ready,
              std::int64_t deadline_ns) override {
        while (!ready()) {
            std::unique_lock lock(m_);
            if (now_ >= deadline_ns) return;
            // Registered before the outer lock goes, so a notify() after it cannot be missed.
            Blocked me{deadline_ns, true};
            outer.unlock();
            block(lock, me);
            lock.unlock();
            outer.lock();
        }
    }

    void notify(std::condition_variable& /*changed*/) override {
        const std::lock_guard lock(m_);
        for (Blocked* blocked : blocked_) release_if(*blocked, blocked->condition);
        changed_.notify_all();
    }

    void threads_start(int count) override {
        const std::lock_guard lock(m_);
        running_ += count;
    }

    void thread_ends() override {
        const std::lock_guard lock(m_);
        --running_;
        advance_if_all_wait();
    }

private:
    struct Blocked {
        std::int64_t wake_ns;
        bool condition;  // also released by notify()
        bool released = false;
    };

    // Whoever releases a blocked thread counts it as running again, so time cannot move on before it ran.
    void release_if(Blocked& blocked, bool release) {
        if (!release || blocked.released) return;
        blocked.released = true;
        ++running_;
    }

    void block(std::unique_lock<std::mutex>& lock, Blocked& me) {
        blocked_.push_back(&me);
        --running_;
        advance_if_all_wait();
        changed_.wait(lock, [&] { return me.released; });
        blocked_.remove(&me);
    }

    void advance_if_all_wait() {
        if (running_ > 0 || blocked_.empty()) return;
        std::int64_t next = runner::kNoDeadline;
        for (const Blocked* blocked : blocked_)
            if (!blocked->released) next = std::min(next, blocked->wake_ns);
        if (next == runner::kNoDeadline) {
            std::fprintf(stderr, "VirtualClock: every thread waits and none for a time: the scenario hangs\n");
            std::abort();
        }
        now_ = std::max(now_, next);
        for (Blocked* blocked : blocked_) release_if(*blocked, blocked->wake_ns <= now_);
        changed_.notify_all();
    }

    std::mutex m_;
    std::condition_variable changed_;
    std::int64_t now_;
    int running_ = 0;
    std::list<Blocked*> blocked_;
};

}  // namespace inferbench::testing
