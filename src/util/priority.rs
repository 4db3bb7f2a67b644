//! A thread that must keep its schedule on a machine the load saturates:
//! the sampler's readings and the coordinator's ticks. With thousands of
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
}
