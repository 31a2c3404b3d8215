//! Ports on 127.0.0.1 for servers a test starts, or for addresses that must refuse.

/// A port on 127.0.0.1 that nothing listens on (for now): the one the system gave a
/// listener that is closed again at once.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .unwrap_or_else(|error| panic!("no free port on 127.0.0.1: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_free_port_can_be_bound() {
        std::net::TcpListener::bind(("127.0.0.1", free_port())).unwrap();
    }
}
