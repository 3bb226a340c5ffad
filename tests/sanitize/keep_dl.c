// keep_dl.c — preloaded into every process of the sanitized CI step (.ci/sanitize,
// tests/sanitize/README.md): dlclose() that keeps the library mapped. Open MPI unloads its
// plugins (mca_*.so) in MPI_Finalize, before LeakSanitizer looks at the heap at exit; the
// plugins' allocations would then be reported from "<unknown module>", which no suppression
// can name (google/sanitizers#615). Kept mapped, they are attributed to their plugin and
// suppressed by lsan.supp's `leak:mca_`, while the sanitizers record stacks with the fast
// frame-pointer unwinder (ASan's default) instead of the full one that found the module
// from the caller's frames: the sanitized tests run about 3x faster. Nothing of dtlab calls
// dlclose.
int dlclose(void *handle);

int dlclose(void *handle) {
    (void)handle;
    return 0;
}
