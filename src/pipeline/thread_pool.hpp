// A small fixed pool of worker threads for a pipeline's CPU stages: parallel_for hands out the indices of one
// batch's work and returns when all are done. The threads are made once and reused batch after batch.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace inferbench::pipeline {

class ThreadPool {
public:
    // `threads` >= 1 workers (std::invalid_argument otherwise).
    explicit ThreadPool(std::size_t threads);
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;
    ~ThreadPool();  // joins the workers

    std::size_t size() const { return workers_.size(); }

    // Calls task(index, worker) for every index in [0, count) on the workers (worker in [0, size()), so that
    // each may use buffers of its own) and waits until all are done. The caller's thread does none of the work
    // (so the workers' CPU time is the stage's). The first exception a task throws is rethrown here once all
    // have finished; the other indices still run. One parallel_for at a time per pool (from one thread).
    void parallel_for(std::size_t count, const std::function<void(std::size_t index, std::size_t worker)>& task);

private:
    void work(std::size_t worker);

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    const std::function<void(std::size_t, std::size_t)>* task_ = nullptr;
    std::size_t count_ = 0;
    std::size_t next_ = 0;
    std::size_t finished_ = 0;
    std::uint64_t generation_ = 0;
    std::exception_ptr error_;
    bool stopping_ = false;
};

}  // namespace inferbench::pipeline
