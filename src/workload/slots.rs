//! What a workload keeps per user between the user's transactions
//! (DBT-1's sessions, TPC-C's terminals): one slot per user, taken by
//! whichever connection serves the user and handed back at the end of each
//! transaction, so per-user state lives in the workload, not the engine.

use std::sync::{Mutex, MutexGuard};

/// One slot per user, behind one lock.
pub struct UserSlots<T> {
    slots: Mutex<Vec<Option<Box<T>>>>,
}

impl<T> Default for UserSlots<T> {
    fn default() -> Self {
        UserSlots {
            slots: Mutex::new(Vec::new()),
        }
    }
}

impl<T> UserSlots<T> {
    fn lock(&self) -> MutexGuard<'_, Vec<Option<Box<T>>>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Forgets every user's state: a new run's users start afresh.
    pub fn reset(&self) {
        self.lock().clear();
    }

    /// Room for `users` slots, made before the run's window opens (growing
    /// the list one user at a time would copy it, inside the window, under
    /// the lock every connection takes).
    pub fn reserve(&self, users: usize) {
        let mut slots = self.lock();
        if slots.len() < users {
            slots.resize_with(users, || None);
        }
    }

    /// The user's state, made by `make` the first time.
    pub fn take(&self, user: u32, make: impl FnOnce() -> Box<T>) -> Box<T> {
        let mut slots = self.lock();
        let u = user as usize;
        if slots.len() <= u {
            slots.resize_with(u + 1, || None);
        }
        slots[u].take().unwrap_or_else(make)
    }

    /// Hands the user's state back at the end of its transaction.
    pub fn give_back(&self, user: u32, t: Box<T>) {
        self.lock()[user as usize] = Some(t);
    }

    /// Reads the state of a user no connection holds now (None if it has
    /// not run yet, or is taken).
    pub fn peek<R>(&self, user: u32, f: impl FnOnce(&T) -> R) -> Option<R> {
        self.lock()
            .get(user as usize)
            .and_then(|s| s.as_deref())
            .map(f)
    }
}
