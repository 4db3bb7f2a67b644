//! A thread that must keep its schedule on a machine the load saturates:
//! the sampler's readings and the engine's timekeeper's ticks. With thousands of
//! runnable client threads and server backends on two cores, an ordinary
//! thread's wake-up can wait seconds for a turn; a real-time one runs when
//! it wakes. Both sleep almost all the time, so they take nothing from the
//! load they measure.

/// Gives the calling thread the lowest real-time priority (`SCHED_FIFO` 1)
/// when the process may (root, or `CAP_SYS_NICE`); true when it did.
/// Elsewhere the thread keeps the normal policy, and readings may be late
/// under load: the sampler records how long each took.
pub fn realtime_thread() -> bool {
    let param = libc::sched_param { sched_priority: 1 };
    // pid 0: the calling thread (Linux schedules threads, not processes).
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
}

/// Returns the calling thread to the normal policy (after
/// [`realtime_thread`]); always allowed.
pub fn normal_thread() {
    let param = libc::sched_param { sched_priority: 0 };
    unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) };
}

/// Gives the calling thread the normal policy, 10 nice levels below the
/// process's (at most 19): it still runs when a CPU is free, but a thread
/// of the load waking beside it takes the CPU first (the sampler's
/// periodic readings while the machine has room). Relative, so a run
/// started under `nice` keeps the sampler below its own clients.
pub fn background_thread() {
    normal_thread();
    // SAFETY: gettid, getpriority and setpriority take and return plain
    // integers; on Linux a thread id given to PRIO_PROCESS names that
    // thread alone.
    // The process's level is its main thread's: a thread set back to the
    // background twice stays 10 below it, not 20.
    unsafe {
        let process = libc::getpriority(libc::PRIO_PROCESS, libc::getpid() as libc::id_t);
        let tid = libc::gettid() as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, (process + 10).min(19));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_thread_becomes_realtime_when_allowed_and_others_do_not() {
        let policy = std::thread::spawn(|| {
            let ok = super::realtime_thread();
            let policy = unsafe { libc::sched_getscheduler(0) };
            super::normal_thread();
            assert_eq!(unsafe { libc::sched_getscheduler(0) }, libc::SCHED_OTHER);
            (ok, policy)
        })
        .join()
        .unwrap();
        let root = unsafe { libc::geteuid() } == 0;
        if root {
            assert_eq!(policy, (true, libc::SCHED_FIFO));
        } else {
            assert_eq!(policy.1 == libc::SCHED_FIFO, policy.0);
        }
        // The caller's own thread is untouched.
        assert_eq!(unsafe { libc::sched_getscheduler(0) }, libc::SCHED_OTHER);
    }

    #[test]
    fn a_background_thread_is_niced_alone() {
        let nice =
            |id: libc::pid_t| unsafe { libc::getpriority(libc::PRIO_PROCESS, id as libc::id_t) };
        // Whatever nice level the tests run at (`nice -n 10 scripts/test`).
        let process = nice(unsafe { libc::getpid() });
        let mine = nice(unsafe { libc::gettid() });
        let theirs = std::thread::spawn(move || {
            super::background_thread();
            let once = nice(unsafe { libc::gettid() });
            super::background_thread();
            (once, nice(unsafe { libc::gettid() }))
        })
        .join()
        .unwrap();
        assert_eq!(theirs.0, (process + 10).min(19));
        assert_eq!(theirs.1, theirs.0, "twice is once");
        let after = nice(unsafe { libc::gettid() });
        assert_eq!(after, mine, "the caller keeps its nice level");
    }
}
