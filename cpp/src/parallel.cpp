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
#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
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
// The pool's lock, its helpers' sleep and the helpers themselves are POSIX threads' own, not std::mutex,
// std::condition_variable and std::thread: libc++ reports a failure of theirs (never expected here; a helper that
// cannot start is told by pthread_create's result) as a std::system_error, whose message is formatted by printf, and
// that alone was about 10 KB of each threaded WebAssembly module (now_ns() below, likewise).
class Mutex {
public:
    Mutex() = default;
    Mutex(const Mutex&) = delete;
    Mutex& operator=(const Mutex&) = delete;
    ~Mutex() { pthread_mutex_destroy(&mutex_); }
    void lock() { pthread_mutex_lock(&mutex_); }
    void unlock() { pthread_mutex_unlock(&mutex_); }
    bool try_lock() { return pthread_mutex_trylock(&mutex_) == 0; }
    pthread_mutex_t* native() { return &mutex_; }

private:
    pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;
};

// A Mutex held for a scope (std::lock_guard's job; std::unique_lock's lock() and unlock() could throw): locked here,
// or already locked by this thread (its try_lock) with `adopt`.
class Locked {
public:
    struct Adopt {};
    explicit Locked(Mutex& m) : m_(m) { m_.lock(); }
    Locked(Mutex& m, Adopt) : m_(m) {}
    Locked(const Locked&) = delete;
    Locked& operator=(const Locked&) = delete;
    ~Locked() { m_.unlock(); }

private:
    Mutex& m_;
};

class WakeUp {
public:
    WakeUp() = default;
    WakeUp(const WakeUp&) = delete;
    WakeUp& operator=(const WakeUp&) = delete;
    ~WakeUp() { pthread_cond_destroy(&cond_); }
    // Until ready(), with m held (as std::condition_variable::wait with a predicate).
    template <class Ready>
    void wait(Mutex& m, Ready ready)
    {
        while (!ready()) pthread_cond_wait(&cond_, m.native());
    }
    void notify_all() { pthread_cond_broadcast(&cond_); }

private:
    pthread_cond_t cond_ = PTHREAD_COND_INITIALIZER;
};

// Monotonic time in ns, read by clock_gettime itself: std::chrono::steady_clock::now() reports a failure as a
// std::system_error too.
std::int64_t now_ns()
{
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return std::int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
}
constexpr std::int64_t microseconds(std::int64_t n) { return n * 1000; }
constexpr std::int64_t milliseconds(std::int64_t n) { return n * 1000000; }

class ThreadPool;
ThreadPool& pool();

class ThreadPool {
public:
    ~ThreadPool() { resize(1); }

    std::size_t threads() const { return helpers_.size() + 1; }

    std::size_t resize(std::size_t wanted)
    {
        Locked running(run_);  // never while a parallel_for uses the helpers
        {
            Locked lock(mutex_);
            stop_ = true;
        }
        wake_.notify_all();
        for (const pthread_t t : helpers_) pthread_join(t, nullptr);
        helpers_.clear();
        stop_ = false;
        serial_until_ = 0;
        if (wanted > 1) helpers_.reserve(wanted - 1);  // none when shrinking to 1 (the destructor allocates nothing)
        for (std::size_t w = 1; w < wanted; ++w) {
            pthread_t t;
            // A helper that cannot start (e.g. a WebAssembly pthread pool smaller than asked): keep the threads we have.
            if (pthread_create(&t, nullptr, serve_helper, reinterpret_cast<void*>(std::uintptr_t(w))) != 0) break;
            helpers_.push_back(t);
        }
        return threads();
    }

    void run(std::size_t tasks, TaskBody body)
    {
        if (!run_.try_lock()) return run_serially(tasks, body);
        Locked running(run_, Locked::Adopt{});
        if (helpers_.empty()) return run_serially(tasks, body);
        const std::int64_t posted_at = now_ns();
        if (posted_at < serial_until_) return run_serially(tasks, body);
        {
            Locked lock(mutex_);
            body_ = &body;
            tasks_ = tasks;
            next_.store(0, std::memory_order_relaxed);
            job_open_ = true;
            ++generation_;
            posted_.store(generation_, std::memory_order_release);
        }
        wake_.notify_all();
        work(0);
        const std::int64_t own_done = now_ns();
        // Every task is claimed once work() returns; wait for the helpers still finishing theirs, then close the job
        // so that a helper waking late finds nothing (it checks job_open_ under the same lock). A polling loop, not
        // a condition variable: the wait is one task long at most, and a browser's main thread may not block (it
        // would spin anyway, and Emscripten warns on every page that does).
        for (;;) {
            {
                Locked lock(mutex_);
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
        const std::int64_t done = now_ns();
        if (done - own_done > own_done - posted_at && done - own_done > microseconds(50)) {
            const std::int64_t pause = std::min(milliseconds(50), std::max(milliseconds(1), 16 * (done - posted_at)));
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

    static void* serve_helper(void* worker)
    {
        pool().serve(std::size_t(reinterpret_cast<std::uintptr_t>(worker)));
        return nullptr;
    }

    void serve(std::size_t worker)
    {
        std::uint64_t seen = 0;
        // mutex_ is held but while it spins and while it works, by hand: a scoped Locked would unlock it again if a
        // task threw out of work() (tasks must not throw; under WebAssembly exceptions the cleanup would still run).
        mutex_.lock();
        const auto ready = [&] { return stop_ || (job_open_ && generation_ != seen); };
        for (;;) {
            if (!ready()) {
                // A forward pass is several parallel_fors in a row: look for the next job a little while before
                // sleeping, so it does not wait for a wake-up (tens of µs in a browser). Helpers may spin; the
                // calling thread never waits here.
                const std::uint64_t last = generation_;
                mutex_.unlock();
                for (int i = 0; i < helper_spin_checks && posted_.load(std::memory_order_acquire) == last; ++i) {
                }
                mutex_.lock();
            }
            wake_.wait(mutex_, ready);
            if (stop_) break;
            seen = generation_;
            ++busy_helpers_;
            mutex_.unlock();
            work(worker);
            mutex_.lock();
            --busy_helpers_;
        }
        mutex_.unlock();
    }

    std::int64_t serial_until_ = 0;  // under run_, now_ns(): calls before this run on the calling thread alone
    Mutex run_;    // one parallel_for (or resize) at a time owns the helpers
    Mutex mutex_;  // guards the job fields below and the helpers' sleep
    WakeUp wake_;
    std::vector<pthread_t> helpers_;
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
