//! Work spread over the machine's cores, for the few jobs over millions of items (the state
//! file's lists, the subscriber index read back with them). Scoped threads from the
//! standard library rather than a parallel-iterator crate: one split in as many contiguous
//! parts as there are cores is all these need.

/// `f` of each contiguous part of `items`, with its number, one part per core (fewer when
/// there are fewer items); the results in the parts' order.
pub fn in_parts<I: Sync, O: Send>(items: &[I], f: impl Fn(usize, &[I]) -> O + Sync) -> Vec<O> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cores.min(items.len()).max(1);
    if threads == 1 {
        return vec![f(0, items)];
    }
    let per = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(per)
            .enumerate()
            .map(|(n, part)| scope.spawn(move || f(n, part)))
            .collect();
        handles
            .into_iter()
            // A panic on another thread is carried to this one, as it would be inline.
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

/// `f` of each item, on every core; the results in the items' order.
pub fn on_all_cores<I: Sync, O: Send>(items: &[I], f: impl Fn(&I) -> O + Sync) -> Vec<O> {
    in_parts(items, |_, part| part.iter().map(&f).collect::<Vec<O>>())
        .into_iter()
        .flatten()
        .collect()
}
