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
    /// The largest alignment a mapping gives without asking: the smallest page size.
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

    /// Gives back a mapping made by `map` (or grown by `grow`) of `len` bytes.
    ///
    /// # Safety
    /// `ptr` and `len` are such a mapping's, and nothing reads it afterwards.
    pub unsafe fn unmap(ptr: *mut u8, len: usize) {
        libc::munmap(ptr.cast(), len);
    }

    /// The mapping `ptr` of `old` bytes made `new` bytes long (both multiples of `HUGE`): shrunk
    /// in place, or its pages moved, not copied, to the start of a new aligned mapping. Null
    /// (and the old mapping untouched) when the system has no memory for it.
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
        // Moving onto a mapping of our own replaces its first `old` bytes with the old pages.
        let moved = libc::mremap(
            ptr.cast(),
            old,
            old,
            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
            to.cast::<libc::c_void>(),
        );
        if moved == libc::MAP_FAILED {
            // Not moved (an old kernel, a limit on mappings): copy instead.
            std::ptr::copy_nonoverlapping(ptr, to, old);
            unmap(ptr, old);
        }
        to
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
// unchanged to every call on it: large blocks are always made, resized and freed by `huge`,
// the others always by `System`. Large blocks are page-aligned, which satisfies every
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
