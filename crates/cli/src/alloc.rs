//! The command line's memory allocator: the system's for small blocks; large blocks in memory
//! of their own, aligned to and rounded up to 2 MiB and backed by huge pages.
//!
//! A million-request log has the engine allocate about 100 MB, nearly all of it in a few
//! dozen large columns. In 4 KiB pages the kernel takes a page fault for every page first
//! written and zeroes it: some 34,000 faults in a `slo report` of a million rows, about a fifth
//! of its CPU time. The kernel backs memory with 2 MiB pages only over 2 MiB-aligned stretches,
//! and the system allocator puts its own 16-byte header at the start of a large block's
//! mapping, so that a 2 MiB column had no such stretch at all and a 4 MiB one only half of one:
//! half of the columns' memory still took 4 KiB faults (docs/performance.md, twelfth round).
//!
//! So on Linux a block of `LARGE` bytes or more is a mapping of its own: aligned to 2 MiB,
//! its length rounded up to 2 MiB, advised `MADV_HUGEPAGE` (transparent huge pages in `madvise`
//! mode, the default of many distributions; where they are off the advice does nothing and the
//! block is ordinary memory). A block that grows moves its pages into a larger aligned mapping
//! (`mremap`) instead of copying them. A stretch the kernel cannot give a huge page at once may
//! make the first write wait while it compacts memory (the default `defrag` setting). Rounding
//! up costs at most 2 MiB of address space per large block, and up to as much resident memory
//! once its last huge page is written. Elsewhere, this is the system allocator unchanged.

use std::alloc::{GlobalAlloc, Layout, System};

/// The system allocator, with large blocks in aligned mappings of their own (see the top).
pub struct HugeForLarge;

#[cfg(target_os = "linux")]
mod huge {
    /// A huge page on x86-64 and on arm64 with 4 KiB pages; a multiple of any base page size.
    pub const HUGE: usize = 2 << 20;
    /// Blocks this large or larger get a mapping of their own. Below it, rounding up to 2 MiB
    /// would more than double a block.
    pub const LARGE: usize = 1 << 20;
    /// The largest alignment a large block is promised. Every mapping here starts on a 2 MiB
    /// boundary, but a page is what any caller of the allocator can ask for: a block that
    /// asks for more goes to the system allocator, by its layout alone, every time.
    pub const ALIGN: usize = 4096;

    /// `size` rounded up to a whole number of huge pages; `None` on overflow.
    pub fn rounded(size: usize) -> Option<usize> {
        size.checked_next_multiple_of(HUGE)
    }

    /// A new mapping of `len` bytes (a multiple of `HUGE`) starting on a `HUGE` boundary and
    /// advised huge pages; null when the system has no memory for it. Its bytes are zero.
    pub fn map(len: usize) -> *mut u8 {
        let Some(over) = len.checked_add(HUGE) else {
            return std::ptr::null_mut();
        };
        // SAFETY: a fresh private anonymous mapping; nothing else refers to it.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                over,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return std::ptr::null_mut();
        }
        // Map a huge page more than asked, then give back what lies before the first 2 MiB
        // boundary and after `len` bytes from it.
        let start = (base as usize).next_multiple_of(HUGE);
        let head = start - base as usize;
        let tail = over - head - len;
        // SAFETY: both ranges lie inside the mapping just made and hold nothing yet; the
        // advice only changes how its pages are backed.
        unsafe {
            if head > 0 {
                libc::munmap(base, head);
            }
            if tail > 0 {
                libc::munmap((start + len) as *mut libc::c_void, tail);
            }
            libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        }
        start as *mut u8
    }

    /// Gives back a mapping made by `map` (or resized by `resize`) of `len` bytes. A failure
    /// (only possible near the kernel's limit on mappings) leaves the mapping in place: a leak,
    /// never memory freed twice.
    ///
    /// # Safety
    /// `ptr` and `len` are such a mapping's, and nothing reads it afterwards.
    pub unsafe fn unmap(ptr: *mut u8, len: usize) {
        libc::munmap(ptr.cast(), len);
    }

    /// The mapping `ptr` of `old` bytes made `new` bytes long (both multiples of `HUGE`): shrunk
    /// in place, or its pages moved, not copied, onto a new aligned mapping of `new` bytes and
    /// grown there, so that it stays one mapping. Null (and the old mapping untouched) when
    /// the system has no memory for it.
    ///
    /// # Safety
    /// `ptr` and `old` are a mapping made by `map`.
    pub unsafe fn resize(ptr: *mut u8, old: usize, new: usize) -> *mut u8 {
        if new <= old {
            if new < old {
                unmap(ptr.add(new), old - new);
            }
            return ptr;
        }
        let to = map(new);
        if to.is_null() {
            return to;
        }
        // Moved onto the whole of `to` (which the kernel unmaps first) and grown to `new` there:
        // one mapping again. (Moving only `old` bytes would leave the block two mappings, the
        // moved pages and the rest of `to`, and kernels before 6.17 cannot move a range that
        // spans two mappings: the block's next move would fail.)
        let moved = libc::mremap(
            ptr.cast(),
            old,
            new,
            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
            to.cast::<libc::c_void>(),
        );
        if moved != libc::MAP_FAILED {
            return to;
        }
        // Not moved (near the limit on mappings). The kernel may have unmapped `to` before it
        // failed, and another thread may have mapped memory there since: `to` is never touched
        // again (at worst its address space leaks). The bytes are copied to a fresh mapping.
        let fresh = map(new);
        if !fresh.is_null() {
            std::ptr::copy_nonoverlapping(ptr, fresh, old);
            unmap(ptr, old);
        }
        fresh
    }
}

/// True when a block of `layout` gets a mapping of its own.
#[cfg(target_os = "linux")]
fn is_large(layout: Layout) -> bool {
    layout.size() >= huge::LARGE && layout.align() <= huge::ALIGN
}

#[cfg(not(target_os = "linux"))]
fn is_large(_layout: Layout) -> bool {
    false
}

// SAFETY: a block is large or not by its layout alone (`is_large`), which the caller passes
// unchanged to every call on it (after a `realloc`, its layout is `(new_size, align)`, and
// `realloc` decides by that layout too): large blocks are always made, resized and freed by
// `huge`, the others always by `System`. Large blocks are page-aligned, which satisfies every
// alignment `is_large` accepts, and at least `size` bytes long.
unsafe impl GlobalAlloc for HugeForLarge {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        #[cfg(target_os = "linux")]
        if is_large(layout) {
            return huge::rounded(layout.size()).map_or(std::ptr::null_mut(), huge::map);
        }
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // A fresh mapping is zero already: no need to write every page.
        #[cfg(target_os = "linux")]
        if is_large(layout) {
            return self.alloc(layout);
        }
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        #[cfg(target_os = "linux")]
        if is_large(layout) {
            if let Some(len) = huge::rounded(layout.size()) {
                huge::unmap(ptr, len);
            }
            return;
        }
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
            return std::ptr::null_mut();
        };
        match (is_large(layout), is_large(new_layout)) {
            (false, false) => System.realloc(ptr, layout, new_size),
            #[cfg(target_os = "linux")]
            (true, true) => match (huge::rounded(layout.size()), huge::rounded(new_size)) {
                (Some(old), Some(new)) => huge::resize(ptr, old, new),
                _ => std::ptr::null_mut(),
            },
            // Across the threshold: a new block, the bytes copied, the old block freed.
            _ => {
                let to = self.alloc(new_layout);
                if !to.is_null() {
                    std::ptr::copy_nonoverlapping(ptr, to, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                to
            }
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::{huge, HugeForLarge};
    use std::alloc::{GlobalAlloc, Layout};

    /// Fills `len` bytes at `ptr` with a pattern that shows a misplaced page.
    unsafe fn fill(ptr: *mut u8, len: usize) {
        for k in (0..len).step_by(4093) {
            *ptr.add(k) = (k.wrapping_mul(2_654_435_761) >> 13) as u8;
        }
    }

    unsafe fn holds_pattern(ptr: *const u8, len: usize) -> bool {
        (0..len)
            .step_by(4093)
            .all(|k| *ptr.add(k) == (k.wrapping_mul(2_654_435_761) >> 13) as u8)
    }

    #[test]
    fn a_large_block_is_aligned_to_a_huge_page_zeroed_and_writable_to_its_end() {
        let a = HugeForLarge;
        let layout = Layout::from_size_align(3 * huge::LARGE + 5, 8).expect("a layout");
        unsafe {
            let ptr = a.alloc_zeroed(layout);
            assert!(!ptr.is_null());
            assert_eq!(ptr as usize % huge::HUGE, 0);
            assert!((0..layout.size()).step_by(4096).all(|k| *ptr.add(k) == 0));
            *ptr.add(layout.size() - 1) = 7;
            a.dealloc(ptr, layout);
        }
    }

    #[test]
    fn growing_and_shrinking_keep_the_bytes_across_the_threshold_both_ways() {
        let a = HugeForLarge;
        // Small to large, large to larger (pages moved), larger to large (in place), large to
        // small, each keeping what fits.
        let sizes = [
            100_000,
            huge::LARGE + 1,
            5 * huge::HUGE + 17,
            huge::HUGE,
            4096,
        ];
        unsafe {
            let mut layout = Layout::from_size_align(sizes[0], 8).expect("a layout");
            let mut ptr = a.alloc(layout);
            fill(ptr, layout.size());
            for &size in &sizes[1..] {
                let kept = layout.size().min(size);
                ptr = a.realloc(ptr, layout, size);
                assert!(!ptr.is_null());
                assert!(holds_pattern(ptr, kept), "realloc to {size} lost bytes");
                layout = Layout::from_size_align(size, 8).expect("a layout");
                fill(ptr, size);
            }
            a.dealloc(ptr, layout);
        }
    }

    /// True when one mapping of this process (a line of /proc/self/maps) covers the `len`
    /// bytes at `ptr`.
    fn one_mapping(ptr: *const u8, len: usize) -> bool {
        let (from, to) = (ptr as usize, ptr as usize + len);
        let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
        maps.lines().any(|line| {
            let range = line.split(' ').next().unwrap_or("");
            let (a, b) = range.split_once('-').unwrap_or(("", ""));
            let hex = |x: &str| usize::from_str_radix(x, 16).unwrap_or(0);
            hex(a) <= from && to <= hex(b)
        })
    }

    #[test]
    fn a_block_grown_by_moving_its_pages_stays_one_mapping() {
        // Kernels before 6.17 cannot move a range that spans two mappings: a block left in
        // two by its first move would fail its second (found in review).
        let a = HugeForLarge;
        let mut layout = Layout::from_size_align(3 * huge::HUGE / 2, 8).expect("a layout");
        unsafe {
            let mut ptr = a.alloc(layout);
            fill(ptr, layout.size());
            for size in [5 * huge::HUGE / 2, 9 * huge::HUGE / 2, 17 * huge::HUGE / 2] {
                let kept = layout.size();
                ptr = a.realloc(ptr, layout, size);
                assert!(!ptr.is_null());
                assert!(holds_pattern(ptr, kept));
                let len = huge::rounded(size).expect("a length");
                assert!(one_mapping(ptr, len), "the block grown to {size} is split");
                layout = Layout::from_size_align(size, 8).expect("a layout");
                fill(ptr, size);
            }
            a.dealloc(ptr, layout);
        }
    }

    #[test]
    fn a_vector_of_a_million_values_grows_and_reads_back() {
        // This binary's tests run on this allocator already (it is the global one); here it is
        // called by hand to grow one block as `Vec` does, doubling from one page, through
        // every path: small, across the threshold, and moved mapping to mapping.
        let a = HugeForLarge;
        let mut cap = 512;
        let mut layout = Layout::array::<u64>(cap).expect("a layout");
        unsafe {
            let mut ptr = a.alloc(layout).cast::<u64>();
            for k in 0..1_000_000usize {
                if k == cap {
                    let grown = Layout::array::<u64>(cap * 2).expect("a layout");
                    ptr = a.realloc(ptr.cast(), layout, grown.size()).cast();
                    assert!(!ptr.is_null());
                    layout = grown;
                    cap *= 2;
                }
                *ptr.add(k) = k as u64 * 3;
            }
            assert!((0..1_000_000usize).all(|k| *ptr.add(k) == k as u64 * 3));
            a.dealloc(ptr.cast(), layout);
        }
    }
}
