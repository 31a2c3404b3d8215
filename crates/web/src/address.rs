//! Which IP addresses WebFetch reaches without a rule naming the host: public unicast only.
//!
//! Everything else is refused with the name of its range: loopback, private (RFC 1918),
//! shared (CGNAT), link-local (the cloud metadata services at `169.254.169.254` and
//! `fd00:ec2::254` among them), unique-local, unspecified, multicast, broadcast, reserved,
//! benchmarking and documentation ranges. IPv6 forms that carry an IPv4 address (mapped,
//! compatible, NAT64, 6to4) are judged by that address, so `[::ffff:127.0.0.1]` is loopback.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `address` is not a public unicast address, or `None` when it is.
pub fn non_public_range(address: IpAddr) -> Option<&'static str> {
    match address {
        IpAddr::V4(v4) => v4_range(v4),
        IpAddr::V6(v6) => v6_range(v6),
    }
}

fn v4_range(address: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = address.octets();
    let range = match (a, b, c) {
        _ if address.is_unspecified() => "the unspecified address (0.0.0.0)",
        (0, _, _) => "\"this network\" (0.0.0.0/8)",
        (127, _, _) => "loopback (127.0.0.0/8)",
        (10, _, _) => "private (10.0.0.0/8)",
        (172, 16..=31, _) => "private (172.16.0.0/12)",
        (192, 168, _) => "private (192.168.0.0/16)",
        (100, 64..=127, _) => "shared address space (CGNAT, 100.64.0.0/10)",
        (169, 254, 169) if address.octets()[3] == 254 => {
            "link-local: the cloud metadata service (169.254.169.254)"
        }
        (169, 254, _) => "link-local (169.254.0.0/16)",
        (192, 0, 0) => "IETF protocol assignments (192.0.0.0/24)",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "documentation (TEST-NET)",
        (198, 18..=19, _) => "benchmarking (198.18.0.0/15)",
        (224..=239, _, _) => "multicast (224.0.0.0/4)",
        _ if address.is_broadcast() => "broadcast (255.255.255.255)",
        (240..=255, _, _) => "reserved (240.0.0.0/4)",
        _ => return None,
    };
    Some(range)
}

fn v6_range(address: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = embedded_v4(address) {
        return v4_range(v4);
    }
    let segments = address.segments();
    let range = match segments[0] {
        _ if address.is_unspecified() => "the unspecified address (::)",
        _ if address.is_loopback() => "loopback (::1)",
        0xfd00 if address == Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x254) => {
            "unique-local: the cloud metadata service (fd00:ec2::254)"
        }
        first if first & 0xfe00 == 0xfc00 => "unique-local (fc00::/7)",
        first if first & 0xffc0 == 0xfe80 => "link-local (fe80::/10)",
        first if first & 0xffc0 == 0xfec0 => "site-local (fec0::/10)",
        first if first & 0xff00 == 0xff00 => "multicast (ff00::/8)",
        0x2001 if segments[1] == 0x0db8 => "documentation (2001:db8::/32)",
        0x2001 if segments[1] == 0 => {
            "a Teredo tunnel (2001::/32), whose endpoint cannot be checked"
        }
        0x0064 if segments[1] == 0xff9b && segments[2] == 1 => "local-use NAT64 (64:ff9b:1::/48)",
        0x0100 if segments[1..4] == [0, 0, 0] => "discard-only (100::/64)",
        // IPv4-compatible addresses (::a.b.c.d) other than :: and ::1 are deprecated.
        0 if segments[1..6] == [0, 0, 0, 0, 0] => "IPv4-compatible (::/96)",
        _ => return None,
    };
    Some(range)
}

/// The IPv4 address an IPv6 address stands for: mapped (`::ffff:a.b.c.d`), compatible
/// (`::a.b.c.d`, not `::` or `::1`), well-known NAT64 (`64:ff9b::a.b.c.d`) and 6to4
/// (`2002:aabb:ccdd::`).
fn embedded_v4(address: Ipv6Addr) -> Option<Ipv4Addr> {
    let segments = address.segments();
    let tail = |high: u16, low: u16| {
        let [a, b] = high.to_be_bytes();
        let [c, d] = low.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    match segments {
        [0, 0, 0, 0, 0, 0xffff, high, low] => Some(tail(high, low)),
        [0, 0, 0, 0, 0, 0, high, low] if high != 0 => Some(tail(high, low)),
        [0x0064, 0xff9b, 0, 0, 0, 0, high, low] => Some(tail(high, low)),
        [0x2002, high, low, ..] => Some(tail(high, low)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn range(text: &str) -> Option<&'static str> {
        non_public_range(text.parse().unwrap())
    }

    #[test]
    fn public_addresses_pass() {
        for address in [
            "93.184.216.34",
            "8.8.8.8",
            "1.1.1.1",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700:4700::1111",
            "2a00:1450:4001:80b::200e",
            "64:ff9b::808:808",
        ] {
            assert_eq!(range(address), None, "{address}");
        }
    }

    #[test]
    fn private_and_special_addresses_are_refused() {
        for address in [
            "127.0.0.1",
            "127.255.255.254",
            "0.0.0.0",
            "0.1.2.3",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "100.64.0.1",
            "100.127.255.255",
            "169.254.169.254",
            "169.254.1.1",
            "192.0.0.170",
            "192.0.2.1",
            "198.51.100.7",
            "203.0.113.9",
            "198.18.0.1",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b:1::1",
            "2002:7f00:1::",
            "fd00:ec2::254",
            "fc00::1",
            "fdff:ffff::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "2001:db8::1",
            "2001:0:4136:e378::1",
            "100::1",
        ] {
            assert!(range(address).is_some(), "{address} should be refused");
        }
        assert_eq!(
            range("169.254.169.254"),
            Some("link-local: the cloud metadata service (169.254.169.254)")
        );
        assert_eq!(range("::ffff:127.0.0.1"), Some("loopback (127.0.0.0/8)"));
    }
}
