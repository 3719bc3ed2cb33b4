//! Searches on threads, their results in a fixed order: the families of one phase do not
//! depend on each other, so they run at once, and each is handed on as soon as it and every
//! one before it have settled, so the output is the same whatever finishes first.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};

use anyhow::Result;

/// One search, run once on some thread.
pub(crate) type Task<'a, T> = Box<dyn FnOnce() -> T + Send + 'a>;

/// Runs `tasks` on at most `jobs` threads, starting them in the order `start` gives (a
/// permutation of their indices: the longest first keeps both cores busy to the end), and
/// hands each result to `settled` in the tasks' own order, as soon as it and all before it are
/// done. When `settled` fails (stdout closed), no further task starts; those running finish,
/// since a search cannot be interrupted, and the error is returned.
pub(crate) fn in_order<T: Send>(
    tasks: Vec<Task<'_, T>>,
    start: &[usize],
    jobs: usize,
    mut settled: impl FnMut(usize, T) -> Result<()>,
) -> Result<()> {
    let count = tasks.len();
    debug_assert_eq!(start.len(), count);
    let tasks: Vec<Mutex<Option<Task<'_, T>>>> =
        tasks.into_iter().map(|t| Mutex::new(Some(t))).collect();
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (sender, receiver) = mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, count.max(1)) {
            let sender = sender.clone();
            let (tasks, next, stop) = (&tasks, &next, &stop);
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let Some(&index) = start.get(next.fetch_add(1, Ordering::Relaxed)) else {
                        break;
                    };
                    let task = tasks[index].lock().ok().and_then(|mut t| t.take());
                    if let Some(task) = task
                        && sender.send((index, task())).is_err()
                    {
                        break;
                    }
                }
            });
        }
        // Only the workers hold senders now: the loop below ends when the last one is done.
        drop(sender);
        let mut done: Vec<Option<T>> = (0..count).map(|_| None).collect();
        let (mut handed, mut failed) = (0, None);
        for (index, result) in receiver {
            done[index] = Some(result);
            while failed.is_none()
                && let Some(result) = done.get_mut(handed).and_then(Option::take)
            {
                if let Err(error) = settled(handed, result) {
                    stop.store(true, Ordering::Relaxed);
                    failed = Some(error);
                }
                handed += 1;
            }
        }
        failed.map_or(Ok(()), Err)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_the_tasks_order_whatever_finishes_first() {
        for jobs in [1, 2, 4] {
            // The first task is the slowest: the others must wait for it to be handed on.
            let tasks: Vec<Task<'_, usize>> = (0..4)
                .map(|i| -> Task<'_, usize> {
                    Box::new(move || {
                        if i == 0 {
                            std::thread::sleep(std::time::Duration::from_millis(30));
                        }
                        i * 10
                    })
                })
                .collect();
            let mut seen = Vec::new();
            in_order(tasks, &[3, 0, 2, 1], jobs, |index, value| {
                seen.push((index, value));
                Ok(())
            })
            .unwrap();
            assert_eq!(seen, [(0, 0), (1, 10), (2, 20), (3, 30)], "jobs {jobs}");
        }
    }

    #[test]
    fn a_failed_hand_on_stops_the_rest() {
        let tasks: Vec<Task<'_, usize>> = (0..3)
            .map(|i| -> Task<'_, usize> { Box::new(move || i) })
            .collect();
        let mut seen = Vec::new();
        let result = in_order(tasks, &[0, 1, 2], 1, |index, _| {
            seen.push(index);
            anyhow::ensure!(index == 0, "closed");
            Ok(())
        });
        assert!(result.is_err());
        assert_eq!(seen, [0, 1]);
    }
}
