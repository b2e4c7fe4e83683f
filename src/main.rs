//! The `icegate` binary: parse the command line and hand over to [`icegate::cli`].

fn main() -> std::process::ExitCode {
    icegate::cli::main()
}
