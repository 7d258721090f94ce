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

}  // namespace detail
}  // namespace attnscope
