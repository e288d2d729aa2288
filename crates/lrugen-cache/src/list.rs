//! Intrusive queues over dense page ids, shared by the zoo's policies.
//!
//! A page is on at most one queue of a [`Queues`] at a time (every zoo policy keeps its resident
//! and ghost queues disjoint), so one pair of links per page serves all of them. The queues are
//! circular with a sentinel node each: queue `q` is node `q`, page `p` is node `p + K`.
//! `links[node] = [newer, older]`: a sentinel's `older` is its queue's head (the newest page) and
//! its `newer` the tail (the oldest), so walking `newer` from the tail visits the queue in
//! insertion order, as libCacheSim's `queue.prev` does from `q_tail`.

/// Toward the head.
const NEWER: usize = 0;
/// Toward the tail.
const OLDER: usize = 1;

/// `K` queues over the pages `0..nr_pages` (8 bytes per page).
#[derive(Debug, Clone)]
pub(crate) struct Queues<const K: usize> {
    links: Vec<[u32; 2]>,
    len: [usize; K],
}

impl<const K: usize> Queues<K> {
    /// `K` empty queues with links for pages `0..nr_pages`.
    pub(crate) fn with_pages(nr_pages: usize) -> Self {
        let mut q = Queues {
            links: (0..K as u32).map(|s| [s, s]).collect(),
            len: [0; K],
        };
        q.reserve(nr_pages);
        q
    }

    /// Makes room for pages `0..nr_pages` (never shrinks).
    pub(crate) fn reserve(&mut self, nr_pages: usize) {
        assert!(nr_pages + K <= u32::MAX as usize, "page id too large");
        if nr_pages + K > self.links.len() {
            self.links.resize(nr_pages + K, [0, 0]);
        }
    }

    /// The number of pages on queue `q`.
    #[inline]
    pub(crate) fn len(&self, q: usize) -> usize {
        self.len[q]
    }

    /// The oldest page of queue `q`.
    #[inline]
    pub(crate) fn tail(&self, q: usize) -> Option<u32> {
        self.page(self.links[q][NEWER])
    }

    /// The newest page of queue `q`.
    #[inline]
    pub(crate) fn head(&self, q: usize) -> Option<u32> {
        self.page(self.links[q][OLDER])
    }

    /// The page inserted after `page` on its queue (toward the head), if any.
    #[inline]
    pub(crate) fn newer(&self, page: u32) -> Option<u32> {
        self.page(self.links[page as usize + K][NEWER])
    }

    /// The page inserted before `page` on its queue (toward the tail), if any.
    #[inline]
    pub(crate) fn older(&self, page: u32) -> Option<u32> {
        self.page(self.links[page as usize + K][OLDER])
    }

    /// Inserts `page`, which is on no queue, at the head of queue `q`.
    #[inline]
    pub(crate) fn push_head(&mut self, q: usize, page: u32) {
        let node = page as usize + K;
        let first = self.links[q][OLDER];
        self.links[node] = [q as u32, first];
        self.links[first as usize][NEWER] = node as u32;
        self.links[q][OLDER] = node as u32;
        self.len[q] += 1;
    }

    /// Takes `page` off queue `q`, which holds it.
    #[inline]
    pub(crate) fn remove(&mut self, q: usize, page: u32) {
        let [newer, older] = self.links[page as usize + K];
        self.links[newer as usize][OLDER] = older;
        self.links[older as usize][NEWER] = newer;
        self.len[q] -= 1;
    }

    /// Moves `page` from queue `from` to the head of queue `to` (which may be `from`).
    #[inline]
    pub(crate) fn move_to_head(&mut self, from: usize, to: usize, page: u32) {
        self.remove(from, page);
        self.push_head(to, page);
    }

    /// The pages of queue `q` from the head (newest) to the tail (oldest).
    pub(crate) fn iter(&self, q: usize) -> impl Iterator<Item = u32> + '_ {
        let mut next = self.head(q);
        std::iter::from_fn(move || {
            let page = next?;
            next = self.older(page);
            Some(page)
        })
    }

    #[inline]
    fn page(&self, node: u32) -> Option<u32> {
        (node as usize >= K).then(|| node - K as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_queues() {
        let mut q = Queues::<2>::with_pages(4);
        assert_eq!(q.tail(0), None);
        q.push_head(0, 1);
        q.push_head(0, 2);
        q.push_head(1, 3);
        assert_eq!(q.iter(0).collect::<Vec<_>>(), [2, 1]);
        assert_eq!(
            (q.tail(0), q.head(0), q.newer(1), q.newer(2)),
            (Some(1), Some(2), Some(2), None)
        );
        q.move_to_head(0, 1, 1);
        assert_eq!(q.iter(1).collect::<Vec<_>>(), [1, 3]);
        assert_eq!((q.len(0), q.len(1)), (1, 2));
        q.remove(1, 3);
        assert_eq!((q.tail(1), q.older(1)), (Some(1), None));
    }
}
