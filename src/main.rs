//! The thin `payrun` binary: parse the command line, hand it to `cmd`, and
//! turn the result into the process's exit status (README, "Exit codes"),
//! in this one place.

use clap::Parser;
use payrun::cmd;
use payrun::exit::Exit;

// glibc's allocator was an eighth of a run's CPU at thousands of provider
// calls per second (perf, issue 15; docs/PERFORMANCE.md); mimalloc's
// thread-local free lists take most of that away. Without the default
// feature `mimalloc`, the system allocator, which heap profilers follow.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let cli = match cmd::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version print and succeed; a usage error is
            // "could not proceed" (1), never 2, which scripts read as
            // "validation rejected rows".
            let _ = e.print();
            let exit = if e.use_stderr() {
                Exit::Fatal
            } else {
                Exit::Ok
            };
            std::process::exit(exit.code());
        }
    };
    let exit = match cmd::run(cli) {
        Ok(exit) => exit,
        // `payrun status | head` closed the pipe early: the reader wanted
        // no more output. Leave quietly.
        Err(err) if cmd::is_broken_pipe(&err) => Exit::Ok,
        Err(err) => {
            eprintln!("error: {err:#}");
            Exit::Fatal
        }
    };
    std::process::exit(exit.code());
}
