import Foundation
import Glibc

/// Classifies hosts and IP addresses as public or not (loopback, private, link-local, …),
/// so a public feed cannot point downloads at this machine, the LAN or a cloud metadata
/// service (169.254.169.254), and so the network and power rules can exempt the demo and a NAS.
public enum AddressClass {
    /// Host names that mean "this machine or the LAN" without being IP literals.
    private static let localNameSuffixes = [".localhost", ".local", ".lan", ".home.arpa", ".internal"]

    /// True for a non-public IP literal or a local host name; false for other names,
    /// whose address is checked when the connection is made.
    public static func isNonPublic(host: String) -> Bool {
        // By hand: a Foundation CharacterSet costs tens of microseconds, and this runs on a
        // reader's first open of an item.
        var trimmed = Substring(host)
        while let first = trimmed.first, first == "[" || first == "]" { trimmed.removeFirst() }
        while let last = trimmed.last, last == "[" || last == "]" { trimmed.removeLast() }
        let name = trimmed.lowercased()
        if let nonPublic = isNonPublic(ip: name) { return nonPublic }
        return name == "localhost" || localNameSuffixes.contains { name.hasSuffix($0) }
    }

    /// nil when `ip` is not an IP literal.
    static func isNonPublic(ip: String) -> Bool? {
        var v4 = in_addr()
        if inet_pton(AF_INET, ip, &v4) == 1 {
            return isNonPublic(v4: UInt32(bigEndian: v4.s_addr))
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, ip, &v6) == 1 {
            let bytes = withUnsafeBytes(of: v6) { Array($0) }
            return isNonPublic(v6: bytes)
        }
        return nil
    }

    private static func isNonPublic(v4 address: UInt32) -> Bool {
        func inBlock(_ base: UInt32, _ bits: UInt32) -> Bool {
            let mask: UInt32 = bits == 0 ? 0 : ~UInt32(0) << (32 - bits)
            return address & mask == base & mask
        }
        return inBlock(0x0000_0000, 8)      // 0.0.0.0/8 "this network"
            || inBlock(0x0A00_0000, 8)      // 10/8
            || inBlock(0x6440_0000, 10)     // 100.64/10 carrier-grade NAT
            || inBlock(0x7F00_0000, 8)      // 127/8 loopback
            || inBlock(0xA9FE_0000, 16)     // 169.254/16 link-local, cloud metadata
            || inBlock(0xAC10_0000, 12)     // 172.16/12
            || inBlock(0xC0A8_0000, 16)     // 192.168/16
            || inBlock(0xE000_0000, 4)      // multicast
            || address == 0xFFFF_FFFF
    }

    private static func isNonPublic(v6 bytes: [UInt8]) -> Bool {
        let isZeroPrefix = bytes[0..<10].allSatisfy { $0 == 0 }
        if isZeroPrefix && bytes[10] == 0xFF && bytes[11] == 0xFF {
            // IPv4-mapped: judge the IPv4 address inside.
            let v4 = bytes[12..<16].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            return isNonPublic(v4: v4)
        }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) { return true }   // :: and ::1
        if bytes[0] & 0xFE == 0xFC { return true }                 // fc00::/7 unique local
        if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 { return true } // fe80::/10 link-local
        if bytes[0] == 0xFF { return true }                        // multicast
        return false
    }
}
