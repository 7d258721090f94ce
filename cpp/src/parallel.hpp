// The parallel-for behind the threaded forward pass: a fixed list of tasks handed out to the kept-alive helper
// threads and the calling thread.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

namespace attnscope {
namespace detail {

/// A non-owning reference to a callable `void(std::size_t task, std::size_t worker)`: no allocation per call.
class TaskBody {
public:
    template <class F, class = std::enable_if_t<!std::is_same<std::decay_t<F>, TaskBody>::value>>
    TaskBody(F& f) : object_(&f), call_([](void* o, std::size_t task, std::size_t worker) { (*static_cast<F*>(o))(task, worker); })
    {
    }
    void operator()(std::size_t task, std::size_t worker) const { call_(object_, task, worker); }

private:
    void* object_;
    void (*call_)(void*, std::size_t, std::size_t);
};

/// Runs body(task, worker) once for every task in [0, tasks) and returns when all are done. `worker` is below
/// worker_count() and no two tasks run at the same time with the same `worker`, so it can index per-thread scratch.
/// Which thread runs which task varies from call to call; callers must make each task's result depend only on the
/// task (then any thread count gives the same bits). Runs serially when there is one task, one thread, when called
/// from inside a task, or while another thread's parallel_for holds the helpers.
void parallel_for(std::size_t tasks, TaskBody body);

/// Per-thread scratch slots a caller of parallel_for() must provide: num_threads() at the time of the call.
std::size_t worker_count();

/// Tasks that do about `total_work` units, `grain` units or more each, split into `items` even pieces at most.
/// Depends only on its arguments (never on the thread count), so the partition, and the results, stay the same.
inline std::size_t task_count(std::size_t items, double total_work, double grain)
{
    if (items == 0) return 0;
    const double wanted = total_work / grain;
    if (wanted < 2) return 1;
    return wanted >= double(items) ? items : std::size_t(wanted);
}

/// Elements per task of the pass's element-wise and row steps (norms, activations, RoPE with the cache copies and
/// mask rows): a few microseconds each, so that a step of a whole pass keeps both threads busy while a generated
/// token's runs alone.
constexpr double element_task_grain = 1 << 14;

/// A non-owning reference to a callable `void(std::size_t begin, std::size_t end)`, as TaskBody; it may refer to a
/// temporary, which lives until the call that takes it returns.
class RangeBody {
public:
    template <class F, class G = std::remove_reference_t<F>, class = std::enable_if_t<!std::is_same<std::decay_t<F>, RangeBody>::value>>
    RangeBody(F&& f)
        : object_(const_cast<void*>(static_cast<const void*>(&f))),
          call_([](void* o, std::size_t begin, std::size_t end) { (*static_cast<G*>(o))(begin, end); })
    {
    }
    void operator()(std::size_t begin, std::size_t end) const { call_(object_, begin, end); }

private:
    void* object_;
    void (*call_)(void*, std::size_t, std::size_t);
};

/// Runs body(begin, end) over [0, n) cut into pieces that start at multiples of `unit`, each about `grain` units of
/// `work_per_unit` or more. The cut depends only on the arguments, never on the thread count; a kernel that steps
/// through its range in whole SIMD vectors and ends with a scalar tail, given a `unit` that is a multiple of the
/// vector width, computes every element as one call over [0, n) would (the tail is the last piece's).
void parallel_ranges(std::size_t n, std::size_t unit, double work_per_unit, RangeBody body, double grain = element_task_grain);

}  // namespace detail
}  // namespace attnscope
