//! The `icegate` binary: parse the command line and hand over to [`icegate::cli`].

/// jemalloc rather than the system's malloc: the request path's many small allocations cost a
/// fifth less time (Cargo.toml says what was measured).
#[cfg(unix)]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    icegate::cli::main()
}
