//! Noticing that a stdio client went away while nothing reads stdin yet: a server that
//! waits for something before it serves (toolhost's gateway waits for its `required`
//! upstream servers) would otherwise learn of it only when it reads.

use std::io::Stdin;
use std::os::fd::AsFd as _;

use rustix::event::{PollFd, PollFlags, poll};
use rustix::io::{Errno, ioctl_fionread};
use tokio_util::sync::CancellationToken;

/// Cancels `token` when the other end of stdin hangs up (a pipe whose writer closed, a socket
/// whose peer did) leaving nothing unread, from a thread of its own that reads nothing: a
/// client that wrote its requests and then closed stdin still wants their answers. Only
/// meaningful while nobody reads stdin (afterwards what is unread cannot be told); waits for
/// ever on a terminal or `/dev/null`, which never hang up.
pub fn cancel_on_stdin_hang_up(token: CancellationToken) {
    let watch = move || {
        let stdin: Stdin = std::io::stdin();
        let descriptor = stdin.as_fd();
        // No events asked for: poll reports only the hang-up and errors, which it always does.
        let mut watched = [PollFd::new(&descriptor, PollFlags::empty())];
        loop {
            match poll(&mut watched, None) {
                Ok(_) => {
                    let seen = watched[0].revents();
                    if seen.intersects(PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL) {
                        if ioctl_fionread(descriptor).is_ok_and(|unread| unread == 0) {
                            token.cancel();
                        }
                        return;
                    }
                }
                Err(Errno::INTR) => {}
                Err(_) => return,
            }
        }
    };
    if let Err(error) = std::thread::Builder::new()
        .name("stdin-hang-up".to_owned())
        .spawn(watch)
    {
        tracing::debug!("cannot watch stdin for a hang-up: {error}");
    }
}
