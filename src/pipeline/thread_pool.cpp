#include "pipeline/thread_pool.hpp"

#include <stdexcept>
#include <utility>

namespace inferbench::pipeline {

ThreadPool::ThreadPool(std::size_t threads) {
    if (threads == 0) throw std::invalid_argument("a thread pool needs at least one thread");
    workers_.reserve(threads);
    for (std::size_t i = 0; i < threads; ++i) workers_.emplace_back([this, i] { work(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    for (auto& worker : workers_) worker.join();
}

void ThreadPool::parallel_for(std::size_t count,
                              const std::function<void(std::size_t index, std::size_t worker)>& task) {
    if (count == 0) return;
    std::unique_lock lock(mutex_);
    task_ = &task;
    count_ = count;
    next_ = 0;
    finished_ = 0;
    error_ = nullptr;
    ++generation_;
    wake_.notify_all();
    done_.wait(lock, [this] { return finished_ == count_; });
    task_ = nullptr;
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

// Each worker takes the next index until none is left; the last to finish an index wakes the caller.
void ThreadPool::work(std::size_t worker) {
    std::uint64_t seen = 0;
    std::unique_lock lock(mutex_);
    while (true) {
        wake_.wait(lock, [&] { return stopping_ || (generation_ != seen && next_ < count_); });
        if (stopping_) return;
        while (task_ != nullptr && next_ < count_) {
            const std::size_t index = next_++;
            const auto* task = task_;
            lock.unlock();
            std::exception_ptr failure;
            try {
                (*task)(index, worker);
            } catch (...) {
                failure = std::current_exception();
            }
            lock.lock();
            if (failure && !error_) error_ = failure;
            if (++finished_ == count_) done_.notify_one();
        }
        seen = generation_;
    }
}

}  // namespace inferbench::pipeline
