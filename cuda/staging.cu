// The host threads that stage a call's inputs (staging.cuh).
#include <algorithm>
#include <chrono>
#include <exception>

#include "staging.cuh"

namespace trinom {

HostPool::HostPool(int workers) {
    for (int w = 0; w < workers; ++w) threads_.emplace_back([this] { loop(); });
}

HostPool::~HostPool() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
        stop_flag_ = true;
    }
    wake_.notify_all();
    for (auto &t : threads_) t.join();
}

int HostPool::default_workers() {
    const unsigned cores = std::thread::hardware_concurrency();
    return static_cast<int>(std::min(7u, cores > 1 ? cores - 1 : 0u));
}

int HostPool::parts(long long count, long long grain) const {
    return static_cast<int>(std::max(1LL, std::min<long long>(size(), count / std::max(1LL, grain))));
}

void HostPool::parallel_for(long long count, long long grain,
                            const std::function<void(int, long long, long long)> &fn) {
    const int parts = this->parts(count, grain);
    if (parts <= 1) {
        fn(0, 0, count);
        return;
    }
    const char *stage = Stage::current();
    std::vector<std::exception_ptr> failure(parts);
    const std::function<void(int)> part = [&](int k) {
        Stage scope(stage);
        try {
            fn(k, count * k / parts, count * (k + 1) / parts);
        } catch (...) {
            failure[k] = std::current_exception();
        }
    };
    run(parts, part);
    for (const auto &f : failure)
        if (f) std::rethrow_exception(f);
}

void HostPool::run(int parts, const std::function<void(int)> &fn) {
    std::unique_lock<std::mutex> lock(mutex_);
    job_ = &fn;
    parts_ = parts;
    next_ = 0;
    finished_ = 0;
    ++generation_;
    lock.unlock();
    wake_.notify_all();
    lock.lock();
    work(lock);
    done_.wait(lock, [this] { return finished_ == parts_; });
    job_ = nullptr;
}

void HostPool::work(std::unique_lock<std::mutex> &lock) {
    while (next_ < parts_) {
        const int part = next_++;
        const std::function<void(int)> *job = job_;
        lock.unlock();
        (*job)(part);
        lock.lock();
        if (++finished_ == parts_) done_.notify_all();
    }
}

void HostPool::loop() {
    long seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        // Back-to-back jobs are common (scan, then stage): poll for a new one for up to 200 us
        // before sleeping, so that the next job does not wait for a wake-up.
        lock.unlock();
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
        while (generation_.load(std::memory_order_acquire) == seen && !stop_flag_.load() &&
               std::chrono::steady_clock::now() < until) {
            std::this_thread::yield();
        }
        lock.lock();
        wake_.wait(lock, [&] { return stop_ || generation_.load() != seen; });
        if (stop_) return;
        seen = generation_.load();
        work(lock);
    }
}

}  // namespace trinom
