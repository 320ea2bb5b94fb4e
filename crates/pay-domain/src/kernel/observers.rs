//! A list of who hears of something: the port a lower context publishes and a higher one
//! implements (a link's move reaches the checkout, a moved test clock the billing scheduler).
//! Weak references: the registrant keeps its observer alive for as long as it wants to hear.

use std::sync::{Arc, RwLock, Weak};

/// The registered observers of one kind; clones share the list.
pub struct Observers<T: ?Sized> {
    list: Arc<RwLock<Vec<Weak<T>>>>,
}

impl<T: ?Sized> Clone for Observers<T> {
    fn clone(&self) -> Self {
        Observers {
            list: self.list.clone(),
        }
    }
}

impl<T: ?Sized> std::fmt::Debug for Observers<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observers")
            .field("alive", &self.each().len())
            .finish()
    }
}

impl<T: ?Sized> Default for Observers<T> {
    fn default() -> Self {
        Observers {
            list: Arc::default(),
        }
    }
}

impl<T: ?Sized> Observers<T> {
    /// Adds `observer` (weakly), dropping those no longer alive.
    pub fn add(&self, observer: &Arc<T>) {
        let mut list = self.list.write().unwrap_or_else(|e| e.into_inner());
        list.retain(|o| o.strong_count() > 0);
        list.push(Arc::downgrade(observer));
    }

    /// Those still alive, in the order they were added.
    pub fn each(&self) -> Vec<Arc<T>> {
        let list = self.list.read().unwrap_or_else(|e| e.into_inner());
        list.iter().filter_map(Weak::upgrade).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observers_are_held_weakly_and_kept_in_order() {
        let obs: Observers<str> = Observers::default();
        let a: Arc<str> = Arc::from("a");
        let b: Arc<str> = Arc::from("b");
        obs.add(&a);
        obs.clone().add(&b);
        assert_eq!(
            obs.each(),
            vec![a.clone(), b.clone()],
            "clones share the list"
        );
        drop(a);
        assert_eq!(
            obs.each(),
            vec![b.clone()],
            "a dropped observer hears nothing"
        );
        let c: Arc<str> = Arc::from("c");
        obs.add(&c);
        assert_eq!(
            obs.list.read().unwrap().len(),
            2,
            "the dead one was dropped"
        );
    }
}
