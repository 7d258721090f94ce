// The helper threads of parallel_for(): started by set_num_threads(), asleep between calls (after looking for the
// next job for a moment, since one forward pass is several calls in a row), and joined by the caller's own share of
// the work (the calling thread never only waits: in a browser's main thread waiting is a
// busy loop that would take a core from the helpers).
#include "parallel.hpp"

#include "attnscope/threads.hpp"

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define ATTNSCOPE_HAS_THREADS 0  // the single-threaded WebAssembly build: no std::thread code linked in
#else
#define ATTNSCOPE_HAS_THREADS 1
#endif

#if ATTNSCOPE_HAS_THREADS
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>
#endif

namespace attnscope {
namespace detail {
namespace {

// Set while a thread runs tasks, so a parallel_for inside a task runs serially instead of waiting on itself.
thread_local bool inside_task = false;

void run_serially(std::size_t tasks, TaskBody body)
{
    const bool outer = inside_task;
    inside_task = true;
    for (std::size_t t = 0; t < tasks; ++t) body(t, 0);
    inside_task = outer;
}

#if ATTNSCOPE_HAS_THREADS
class ThreadPool {
public:
    ~ThreadPool() { resize(1); }

    std::size_t threads() const { return helpers_.size() + 1; }

    std::size_t resize(std::size_t wanted)
    {
        std::lock_guard<std::mutex> running(run_);  // never while a parallel_for uses the helpers
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        wake_.notify_all();
        for (std::thread& t : helpers_) t.join();
        helpers_.clear();
        stop_ = false;
        serial_until_ = {};
        for (std::size_t w = 1; w < wanted; ++w) {
            try {
                helpers_.emplace_back([this, w] { serve(w); });
            } catch (const std::system_error&) {
                break;  // e.g. a WebAssembly pthread pool smaller than asked: keep the threads we have
            }
        }
        return threads();
    }

    void run(std::size_t tasks, TaskBody body)
    {
        std::unique_lock<std::mutex> running(run_, std::try_to_lock);
        if (!running.owns_lock() || helpers_.empty()) return run_serially(tasks, body);
        const Clock::time_point posted_at = Clock::now();
        if (posted_at < serial_until_) return run_serially(tasks, body);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            body_ = &body;
            tasks_ = tasks;
            next_.store(0, std::memory_order_relaxed);
            job_open_ = true;
            ++generation_;
            posted_.store(generation_, std::memory_order_release);
        }
        wake_.notify_all();
        work(0);
        const Clock::time_point own_done = Clock::now();
        // Every task is claimed once work() returns; wait for the helpers still finishing theirs, then close the job
        // so that a helper waking late finds nothing (it checks job_open_ under the same lock). A polling loop, not
        // a condition variable: the wait is one task long at most, and a browser's main thread may not block (it
        // would spin anyway, and Emscripten warns on every page that does).
        for (;;) {
            {
                std::lock_guard<std::mutex> lock(mutex_);
                if (busy_helpers_ == 0) {
                    job_open_ = false;
                    body_ = nullptr;
                    break;
                }
            }
            std::this_thread::yield();
        }
        // A helper that is not running (its core taken by another library's thread pool, another process, a busy
        // page) holds the task it claimed until the system runs it again, and the caller waits for it. When the wait
        // outlasted the caller's own share, this thread alone would have been as fast: the next calls run serially
        // for a while (16 times this call, 1 to 50 ms), then the helpers are tried again. Only who runs a task
        // changes, never how the work is cut, so the results are the same bits.
        const Clock::time_point done = Clock::now();
        if (done - own_done > own_done - posted_at && done - own_done > std::chrono::microseconds(50)) {
            const auto pause = std::min<Clock::duration>(std::chrono::milliseconds(50),
                                                         std::max<Clock::duration>(std::chrono::milliseconds(1), 16 * (done - posted_at)));
            serial_until_ = done + pause;
        }
    }

private:
    void work(std::size_t worker)
    {
        inside_task = true;
        for (std::size_t t; (t = next_.fetch_add(1, std::memory_order_relaxed)) < tasks_;) (*body_)(t, worker);
        inside_task = false;
    }

    void serve(std::size_t worker)
    {
        std::uint64_t seen = 0;
        std::unique_lock<std::mutex> lock(mutex_);
        const auto ready = [&] { return stop_ || (job_open_ && generation_ != seen); };
        for (;;) {
            if (!ready()) {
                // A forward pass is several parallel_fors in a row: look for the next job a little while before
                // sleeping, so it does not wait for a wake-up (tens of µs in a browser). Helpers may spin; the
                // calling thread never waits here.
                const std::uint64_t last = generation_;
                lock.unlock();
                for (int i = 0; i < helper_spin_checks && posted_.load(std::memory_order_acquire) == last; ++i) {
                }
                lock.lock();
            }
            wake_.wait(lock, ready);
            if (stop_) return;
            seen = generation_;
            ++busy_helpers_;
            lock.unlock();
            work(worker);
            lock.lock();
            --busy_helpers_;
        }
    }

    using Clock = std::chrono::steady_clock;
    Clock::time_point serial_until_{};  // under run_: calls before this run on the calling thread alone
    std::mutex run_;    // one parallel_for (or resize) at a time owns the helpers
    std::mutex mutex_;  // guards the job fields below and the helpers' sleep
    std::condition_variable wake_;
    std::vector<std::thread> helpers_;
    bool stop_ = false;
    bool job_open_ = false;
    std::uint64_t generation_ = 0;
    std::size_t busy_helpers_ = 0;
    const TaskBody* body_ = nullptr;
    std::size_t tasks_ = 0;
    std::atomic<std::size_t> next_{0};
    std::atomic<std::uint64_t> posted_{0};  // generation_, readable without the lock by a spinning helper
    static constexpr int helper_spin_checks = 20000;
};

ThreadPool& pool()
{
    static ThreadPool instance;
    return instance;
}
#endif

}  // namespace

void parallel_for(std::size_t tasks, TaskBody body)
{
#if ATTNSCOPE_HAS_THREADS
    if (tasks > 1 && !inside_task) return pool().run(tasks, body);
#endif
    run_serially(tasks, body);
}

std::size_t worker_count() { return num_threads(); }

void parallel_ranges(std::size_t n, std::size_t unit, double work_per_unit, RangeBody body, double grain)
{
    const std::size_t units = (n + unit - 1) / unit;
    const std::size_t tasks = task_count(units, double(units) * work_per_unit, grain);
    auto task = [&](std::size_t t, std::size_t) {
        const std::size_t begin = t * units / tasks * unit, end = (t + 1) * units / tasks * unit;
        body(begin, end < n ? end : n);
    };
    parallel_for(tasks, task);
}

}  // namespace detail

std::size_t max_threads()
{
#if ATTNSCOPE_HAS_THREADS
    const unsigned hardware = std::thread::hardware_concurrency();
    return hardware ? hardware : 1;
#else
    return 1;
#endif
}

std::size_t set_num_threads(std::size_t threads)
{
#if ATTNSCOPE_HAS_THREADS
    if (threads < 1) threads = 1;
    if (threads > max_threads()) threads = max_threads();
    if (threads == detail::pool().threads()) return threads;
    return detail::pool().resize(threads);
#else
    (void)threads;
    return 1;
#endif
}

std::size_t num_threads()
{
#if ATTNSCOPE_HAS_THREADS
    return detail::pool().threads();
#else
    return 1;
#endif
}

}  // namespace attnscope
