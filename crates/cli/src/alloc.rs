//! The command line's memory allocator: the system's, with large blocks backed by huge pages.
//!
//! A million-request log has the engine allocate about 100 MB, nearly all of it in a few
//! dozen large columns. In 4 KiB pages the kernel takes a page fault for every page first
//! written: some 34,000 in a `slo report` of a million rows, about a fifth of its CPU time.
//! On Linux, blocks of 2 MiB and more are advised `MADV_HUGEPAGE`, so that the kernel backs
//! them with 2 MiB pages where it can (transparent huge pages in `madvise` mode, the default of
//! many distributions; without them the advice is ignored). Everywhere else, and for smaller
//! blocks, this is the system allocator unchanged.

use std::alloc::{GlobalAlloc, Layout, System};

/// The system allocator, advising huge pages for large blocks.
pub struct HugeForLarge;

/// The size of a huge page on x86-64 and most ARM64 kernels; smaller blocks are left alone.
const LARGE: usize = 2 << 20;

/// Advises huge pages for the whole pages inside a block of `size` bytes at `ptr`.
#[cfg(target_os = "linux")]
fn advise(ptr: *mut u8, size: usize) {
    const PAGE: usize = 4096;
    if ptr.is_null() || size < LARGE {
        return;
    }
    let start = (ptr as usize).next_multiple_of(PAGE);
    let end = (ptr as usize + size) / PAGE * PAGE;
    if end > start {
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
