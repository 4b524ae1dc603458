//! The command line's memory allocator: the system's, with large blocks backed by huge pages.
//!
//! A million-request log has the engine allocate about 100 MB, nearly all of it in a few
//! dozen large columns. In 4 KiB pages the kernel takes a page fault for every page first
//! written: some 34,000 in a `slo report` of a million rows, about a fifth of its CPU time.
//! On Linux, the 2 MiB-aligned stretches inside a block are advised `MADV_HUGEPAGE`, so that
//! the kernel backs them with 2 MiB pages where it can (transparent huge pages in `madvise`
//! mode, the default of many distributions; where they are off the advice does nothing). A
//! stretch the kernel cannot give a huge page at once may make the first write wait while it
//! compacts memory (the default `defrag` setting); measured only on a quiet machine. Everywhere
//! else, and for blocks without such a stretch, this is the system allocator unchanged.

use std::alloc::{GlobalAlloc, Layout, System};

/// The system allocator, advising huge pages for large blocks.
pub struct HugeForLarge;

/// Advises huge pages for the 2 MiB-aligned stretches inside a block of `size` bytes at `ptr`.
/// (The kernel maps a huge page only over such a stretch; advising the rest would only split
/// the mapping.)
#[cfg(target_os = "linux")]
fn advise(ptr: *mut u8, size: usize) {
    /// A huge page on x86-64 and on arm64 with 4 KiB pages; a multiple of any base page size.
    const HUGE: usize = 2 << 20;
    let Some(start) = (ptr as usize).checked_next_multiple_of(HUGE) else {
        return;
    };
    let end = (ptr as usize).saturating_add(size) / HUGE * HUGE;
    if !ptr.is_null() && end > start {
        // SAFETY: `start..end` lies inside a block this allocator has just handed out. The
        // advice changes how the kernel backs those pages, never what they hold; a failure
        // (advice not supported) is harmless and ignored.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_ptr: *mut u8, _size: usize) {}

// SAFETY: every call is passed to `System` unchanged; `advise` only adds advice on the pages
// of the block `System` returned.
unsafe impl GlobalAlloc for HugeForLarge {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = System.alloc(layout);
        advise(ptr, layout.size());
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let ptr = System.alloc_zeroed(layout);
        advise(ptr, layout.size());
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let ptr = System.realloc(ptr, layout, new_size);
        advise(ptr, new_size);
        ptr
    }
}
