//! The `icegate` binary: parse the command line and hand over to [`icegate::cli`].

/// mimalloc instead of the system allocator: a request allocates about a hundred small
/// buffers, and glibc's malloc and free were a sixth of icegate's instructions per request
/// (benches/load/callgrind.sh). The load harness's control is built with it too.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    icegate::cli::main()
}
