//! The `pagelab` binary: the command line of `pagelab_cli`.

fn main() {
    // Die quietly when the reader of our output goes away (`pagelab seeds | head`), as Unix
    // tools do, instead of panicking on a broken pipe.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of a signal at start-up.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    std::process::exit(pagelab_cli::main_from(std::env::args_os()));
}
