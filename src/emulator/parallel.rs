//! Work spread over the machine's cores, for the few jobs over millions of items (the state
//! file's lists, the subscriber index read back with them, a generated population's rows).
//! Scoped threads from the standard library rather than a parallel-iterator crate: one split
//! in as many contiguous parts as there are cores is all these need, and no pool of threads
//! outlives a job (a process that forks, as Celery's prefork workers do, inherits none
//! half-held, where rayon's global pool would be left without its threads in the child).

use std::mem::MaybeUninit;

/// `f` of each contiguous part of `items`, with its number, one part per core (fewer when
/// there are fewer items); the results in the parts' order.
pub fn in_parts<I: Sync, O: Send>(items: &[I], f: impl Fn(usize, &[I]) -> O + Sync) -> Vec<O> {
    let Some(per) = part_size(items.len()) else {
        return vec![f(0, items)];
    };
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(per)
            .enumerate()
            .map(|(n, part)| scope.spawn(move || f(n, part)))
            .collect();
        handles.into_iter().map(joined).collect()
    })
}

/// `f` on each item, changed where it lies, one contiguous part of `items` per core.
pub fn each_mut<I: Send>(items: &mut [I], f: impl Fn(&mut I) + Sync) {
    let Some(per) = part_size(items.len()) else {
        return items.iter_mut().for_each(f);
    };
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks_mut(per)
            .map(|part| scope.spawn(move || part.iter_mut().for_each(f)))
            .collect();
        handles.into_iter().for_each(joined);
    });
}

/// Appends to `items` what `make` makes of each part's state, as many as the part's count,
/// every part on some core, in the parts' order: the items are written where they will lie,
/// with no second copy of a list of millions (as `Vec::extend` of each core's own list
/// would make) and no placeholder written first (whose fresh pages one core would fault in
/// alone).
pub fn extend_in_parts<T: Send, S: Send>(
    items: &mut Vec<T>,
    parts: Vec<(usize, S)>,
    make: impl Fn(&mut S) -> T + Sync,
) {
    let total: usize = parts.iter().map(|(n, _)| n).sum();
    items.reserve(total);
    let mut spare = &mut items.spare_capacity_mut()[..total];
    let mut slots: Vec<(&mut [MaybeUninit<T>], S)> = Vec::with_capacity(parts.len());
    for (n, state) in parts {
        let (part, rest) = std::mem::take(&mut spare).split_at_mut(n);
        slots.push((part, state));
        spare = rest;
    }
    each_mut(&mut slots, |(part, state)| {
        for slot in part.iter_mut() {
            slot.write(make(state));
        }
    });
    drop(slots);
    let len = items.len();
    // SAFETY: the `total` slots past `len` are initialised: the parts cover them end to
    // end (their counts sum to `total`), and `each_mut` returns only once every part has
    // written each of its slots (a part's panic is carried here first, so that written
    // items then leak rather than a slot being read unwritten).
    unsafe { items.set_len(len + total) };
}

/// How many items each core takes; `None` when one thread is all there is to use.
fn part_size(items: usize) -> Option<usize> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cores.min(items).max(1);
    (threads > 1).then(|| items.div_ceil(threads))
}

/// A part's result; a panic on its thread carried to this one, as it would be inline.
fn joined<O>(h: std::thread::ScopedJoinHandle<'_, O>) -> O {
    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// `f` of each item, on every core; the results in the items' order.
pub fn on_all_cores<I: Sync, O: Send>(items: &[I], f: impl Fn(&I) -> O + Sync) -> Vec<O> {
    in_parts(items, |_, part| part.iter().map(&f).collect::<Vec<O>>())
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extend_in_parts_appends_each_parts_items_in_the_parts_order() {
        // Uneven parts, more of them than cores, one empty, after items already held.
        let counts = [3, 0, 5, 1, 7, 2, 4];
        let parts: Vec<(usize, (usize, usize))> = counts
            .iter()
            .enumerate()
            .map(|(part, &n)| (n, (part, 0)))
            .collect();
        let mut items = vec![(99, 99)];
        extend_in_parts(&mut items, parts, |(part, i)| {
            *i += 1;
            (*part, *i)
        });
        let mut expected = vec![(99, 99)];
        for (part, &n) in counts.iter().enumerate() {
            expected.extend((1..=n).map(|i| (part, i)));
        }
        assert_eq!(items, expected);
    }
}
