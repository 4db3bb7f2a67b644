//! A counting global allocator for the tests that prove a path allocates
//! nothing. A global allocator is per binary, so each such test binary
//! declares its own static of this type:
//!
//! ```ignore
//! #[global_allocator]
//! static GLOBAL: util::alloc::Counting = util::alloc::Counting;
//! ```
//!
//! It counts allocations (and reallocations) twice: per thread, so a test
//! can check its own thread's hot path while other tests run alongside, and
//! per process, for code that runs on threads of its own (the engine's
//! clients).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

pub struct Counting;

thread_local! {
    static THREAD: Cell<u64> = const { Cell::new(0) };
}

static PROCESS: AtomicU64 = AtomicU64::new(0);

fn count() {
    PROCESS.fetch_add(1, Ordering::Relaxed);
    // Not during thread teardown, when the thread-local is gone.
    let _ = THREAD.try_with(|n| n.set(n.get() + 1));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Allocations this thread has made so far.
pub fn thread_allocations() -> u64 {
    THREAD.with(Cell::get)
}

/// Allocations every thread of the process has made so far.
pub fn process_allocations() -> u64 {
    PROCESS.load(Ordering::Relaxed)
}
